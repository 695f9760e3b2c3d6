-- Churns through many closures and coroutines that become garbage.
local sum = 0
for i = 1, 500000 do
  local f = function(x) return x + i end
  sum = sum + f(1)
end
print("closures", sum)
local done = 0
for i = 1, 50000 do
  local co = coroutine.wrap(function(a) local b = coroutine.yield(a * 2) return a + b end)
  local first = co(i)
  local second = co(1)
  if first == i * 2 and second == i + 1 then done = done + 1 end
end
print("coroutines", done)
-- suspended coroutines that are never finished must be collectable
local suspended = 0
for i = 1, 20000 do
  local co = coroutine.create(function() coroutine.yield(i) end)
  coroutine.resume(co)
  if coroutine.status(co) == "suspended" then suspended = suspended + 1 end
end
print("abandoned suspended", suspended)
-- cyclic structures
local count = 0
for i = 1, 200000 do
  local a, b = {}, {}
  a.other, b.other = b, a
  a.self = a
  if a.other.other == a then count = count + 1 end
end
print("cycles", count)
