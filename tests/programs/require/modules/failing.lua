-- A module that raises an error while loading.
error("failing module refuses to load")
