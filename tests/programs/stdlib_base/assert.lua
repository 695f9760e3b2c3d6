-- assert returns all its arguments or raises an error with the message.
print(assert(1, "unused", 3))
print(assert("value"))
print(pcall(assert, false))
print(pcall(assert, nil, "custom message"))
print(pcall(assert, false, 42))
local errobj = {code = 7}
local ok, e = pcall(assert, false, errobj)
print(ok, e == errobj, e.code)
print(pcall(assert))
print(select("#", assert(true, nil, nil)))
-- assert with a message that is not a string keeps it as the error value
local ok2, e2 = pcall(assert, nil, true)
print(ok2, e2, type(e2))
-- the typical io pattern: assert(f(...)) on a failing call
local ok3, e3 = pcall(function() return assert(tonumber("x"), "not a number") end)
print(ok3, e3)
-- assert does not add position information to messages
local ok4, e4 = pcall(function() assert(false, "no position") end)
print(e4)
