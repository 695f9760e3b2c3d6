-- Errors inside coroutines are returned by resume; dead coroutines.
local co = coroutine.create(function(x)
  coroutine.yield(x)
  error("failure in coroutine")
end)
print(coroutine.resume(co, 1))
print(coroutine.resume(co))
print(coroutine.status(co))
print(coroutine.resume(co))
-- error values that are not strings
local co2 = coroutine.create(function() error({msg = "table error"}) end)
local ok, e = coroutine.resume(co2)
print(ok, type(e), e.msg)
local co3 = coroutine.create(function() error() end)
print(coroutine.resume(co3))
-- runtime errors carry positions
local co4 = coroutine.create(function() local t = nil; return t.field end)
print(coroutine.resume(co4))
-- yield outside a coroutine
print(pcall(coroutine.yield, 1))
-- wrap rethrows the error; a dead wrap raises on the next call
local w = coroutine.wrap(function() return 1 end)
print(w())
print(pcall(w))
-- an error after catching an inner coroutine's error
local outer = coroutine.create(function()
  local inner = coroutine.create(function() error("inner fail", 0) end)
  local iok, ie = coroutine.resume(inner)
  coroutine.yield("inner said: " .. ie)
  error("outer fail", 0)
end)
print(coroutine.resume(outer))
print(coroutine.resume(outer))
-- resume with wrong argument
print(pcall(coroutine.resume))
print(pcall(coroutine.wrap, "x"))
