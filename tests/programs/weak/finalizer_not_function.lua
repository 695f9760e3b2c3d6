-- A __gc field that is not a function is called all the same: a callable table runs, and
-- anything else fails as a call does, which is a warning naming the metamethod ("attempt
-- to call a boolean value (metamethod '__gc')"; the name was missing). The program ends
-- with status 1 so that the test compares the first stderr line: that warning.
warn("@on")
setmetatable({}, {__gc = setmetatable({}, {__call = function(self, o) print("callable __gc", type(o)) end})})
collectgarbage()
setmetatable({}, {__gc = true})
collectgarbage()
print("after the warning")
os.exit(1)
