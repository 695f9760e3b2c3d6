error("badmod refuses to load")
