-- os.exit(true, true) exits with status 0 after closing the state, which
-- runs pending __close handlers of the main chunk.
local guard <close> = setmetatable({}, {__close = function() print("closed on exit") end})
print("exiting with true")
os.exit(true, true)
print("never printed")
