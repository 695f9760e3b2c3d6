-- warnings from a script: pieces, numbers, control messages
warn("one")
warn("two", " pieces")
warn("number ", 12, " ", 1.5)
warn("@off")
warn("hidden")
warn("@on")
warn("back")
