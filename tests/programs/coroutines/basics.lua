-- coroutine.create/resume/yield: values passed in and out.
local co = coroutine.create(function(a, b)
  print("start", a, b)
  local c = coroutine.yield(a + b)
  print("got", c)
  local d, e = coroutine.yield(c * 2)
  print("got", d, e)
  return d + e, "done"
end)
print(coroutine.resume(co, 1, 2))
print(coroutine.resume(co, 10))
print(coroutine.resume(co, 3, 4))
print(coroutine.resume(co))
print(coroutine.resume(co))
-- yield with no values and with many values
local co2 = coroutine.create(function(...)
  coroutine.yield()
  coroutine.yield(...)
  return select("#", coroutine.yield(nil, nil))
end)
print(coroutine.resume(co2, "x", "y", "z"))
print(coroutine.resume(co2))
print(coroutine.resume(co2))
print(coroutine.resume(co2, 1, 2, 3, 4))
-- a generator of Fibonacci numbers
local function fibgen(n)
  return coroutine.create(function()
    local a, b = 0, 1
    for _ = 1, n do
      coroutine.yield(a)
      a, b = b, a + b
    end
  end)
end
local g = fibgen(15)
local out = {}
while true do
  local ok, v = coroutine.resume(g)
  if not ok or v == nil then break end
  out[#out + 1] = v
end
print(table.concat(out, " "))
-- coroutines are values of type thread
print(type(co), coroutine.resume == coroutine.resume)
print(pcall(coroutine.create, 42))
print(pcall(coroutine.resume, 42))
