-- Three language threads with deterministic work (run_known_profiles.py): thread k + 1 runs
-- work(1000k): mid 1000k times, leaf 10 times per mid. mid yields after its loop, so that
-- green threads interleave in a carrier's stream (and move between carriers) with Lua
-- frames open.
local function leaf(x) return x end
local function mid(n)
  for i = 1, n do leaf(i) end
  thread.yield()
end
local function work(k)
  for i = 1, k do mid(10) end
  return k
end
local hs = {}
for k = 1, 3 do hs[k] = thread.spawn(work, 1000 * k) end
local s = 0
for k = 1, 3 do s = s + hs[k]:join() end
print(s)
