-- Yielding from inside pcall, xpcall, and nested calls inside a coroutine.
local co = coroutine.create(function()
  local ok, v = pcall(function()
    local x = coroutine.yield("yield inside pcall")
    return x * 2
  end)
  print("pcall returned", ok, v)
  local ok2, e2 = pcall(function()
    coroutine.yield("second yield inside pcall")
    error("error after yield", 0)
  end)
  print("pcall caught", ok2, e2)
  local ok3, v3 = xpcall(function()
    return coroutine.yield("yield inside xpcall") + 1
  end, function(m) return "handler: " .. tostring(m) end)
  print("xpcall returned", ok3, v3)
  local ok4, v4 = xpcall(function()
    coroutine.yield("yield before error in xpcall")
    local t = nil
    return t.x
  end, function(m) return "handled" end)
  print("xpcall handled", ok4, v4)
  return "finished"
end)
print(coroutine.resume(co))
print(coroutine.resume(co, 21))
print(coroutine.resume(co))
print(coroutine.resume(co, 41))
print(coroutine.resume(co))
print(coroutine.resume(co))
print(coroutine.status(co))

-- nested pcalls with yields at several levels
local nested = coroutine.wrap(function()
  local r = {pcall(function()
    local a = coroutine.yield(1)
    local ok, b = pcall(function()
      return coroutine.yield(a + 1) * 10
    end)
    return a, ok, b
  end)}
  return table.concat({tostring(r[1]), tostring(r[2]), tostring(r[3]), tostring(r[4])}, " ")
end)
print(nested())
print(nested(5))
print(nested(7))

-- yield across table.sort's comparator is not allowed (C boundary)
local sorter = coroutine.create(function()
  local t = {3, 1, 2}
  table.sort(t, function(a, b) coroutine.yield() return a < b end)
end)
local okS, eS = coroutine.resume(sorter)
print(okS, eS)

-- yield inside a generic-for iterator and inside string.gsub callback (not allowed)
local gen = coroutine.wrap(function()
  for i in function(_, c) c = c + 1; if c <= 3 then coroutine.yield("it" .. c) return c end end, nil, 0 do end
  return "loop done"
end)
print(gen(), gen(), gen(), gen())
local g2 = coroutine.create(function() return ("abc"):gsub(".", function(c) coroutine.yield(c) end) end)
print(coroutine.resume(g2))
