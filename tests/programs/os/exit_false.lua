-- os.exit(false) exits with EXIT_FAILURE (1); to-be-closed variables of the
-- main chunk are not closed when the second argument is absent.
local guard <close> = setmetatable({}, {__close = function() print("closed") end})
print("exiting with false")
os.exit(false)
