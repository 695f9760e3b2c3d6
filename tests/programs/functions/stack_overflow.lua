-- Unbounded recursion raises a catchable "stack overflow" error.
local function inf(n) return 1 + inf(n + 1) end
local ok, err = pcall(inf, 1)
print("pcall failed", not ok)
print("message has stack overflow", type(err) == "string" and err:find("stack overflow", 1, true) ~= nil)

-- the program keeps working afterwards, with a full stack again
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
print(depth(5000))

-- overflow through a metamethod chain
local mt = {}
mt.__index = function(t, k) return t[k .. "x"] end
local ok2, err2 = pcall(function() return setmetatable({}, mt).a end)
print("metamethod overflow failed", not ok2)

-- overflow inside a coroutine is reported by resume
local co = coroutine.create(function() return inf(1) end)
local ok3, err3 = coroutine.resume(co)
print("coroutine overflow", ok3, type(err3) == "string" and err3:find("stack overflow", 1, true) ~= nil)
print(coroutine.status(co))

-- an error handler is still called
local ok4, msg4 = xpcall(inf, function(m) return "handled" end, 1)
print(ok4, msg4)
