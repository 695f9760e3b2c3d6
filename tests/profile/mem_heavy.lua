-- Heap loads and stores between safepoints, on a ring that is full most of the time
-- (run_profile_tests.py: small ring, slow analyzer): every EV_LOAD/EV_STORE must find room
-- reserved at the safepoint before it (-Xstats "waits outside safepoints 0"), through plain
-- loops, straight-line code with many accesses, calls, a C call (table.concat), metamethods
-- (__index and __newindex functions), pcall and a coroutine.
local t, u = {}, {}
for i = 1, 64 do t[i] = 0 end
local proxy = setmetatable({}, {
  __index = function(_, k) return u[k] end,
  __newindex = function(_, k, v) u[k] = v end,
})
local function straight(a)
  a[1] = 1; a[2] = a[1]; a[3] = a[2]; a[4] = a[3]; a[5] = a[4]; a[6] = a[5]; a[7] = a[6]
  a[8] = a[7]; a[9] = a[8]; a[10] = a[9]; a.x = a[10]; a.y = a.x; a.z = a.y
  return a.z
end
local sum = 0
for i = 1, 20000 do
  t[i % 64 + 1] = i
  sum = sum + t[(i * 7) % 64 + 1] + straight(t)
  proxy[i % 8] = i
  sum = sum + proxy[i % 8]
  if i % 1000 == 0 then
    sum = sum + #table.concat({"a", "b", tostring(i)})
    local ok, v = pcall(straight, u)
    sum = sum + (ok and v or 0)
    local co = coroutine.wrap(function() for j = 1, 10 do t[j] = j; coroutine.yield(t[j]) end end)
    for _ = 1, 10 do sum = sum + co() end
  end
end
print(sum)
