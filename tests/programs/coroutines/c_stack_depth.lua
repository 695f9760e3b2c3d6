-- Regression: deep C recursion inside coroutines (metamethod loops, nested pcall, yields
-- inside __lt, a deeply nested expression compiled inside a coroutine) must stop with
-- lua5.4's "C stack overflow" or succeed, never overflow the coroutine's own C stack.
local mt = {}
mt.__index = function(t, k) return t[k .. "x"] end
local co = coroutine.create(function() return setmetatable({}, mt).a end)
print(coroutine.resume(co))
local co2 = coroutine.wrap(function()
  local function f(n) if n == 0 then return 0 end return pcall(f, n - 1) end
  return f(150)
end)
print(co2())
local co3 = coroutine.wrap(function()
  local t = setmetatable({}, {__lt = function(a, b) coroutine.yield("in lt") return true end})
  return t < t
end)
print(co3(), co3())
local s = string.rep("(", 150) .. "1" .. string.rep(")", 150)
print(coroutine.wrap(function() return load("return " .. s)() end)())
