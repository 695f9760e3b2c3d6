-- Deterministic work on three language threads plus the main one (tests/fault): each thread
-- calls leaf() 20000 * k times through mid(); prints the total. Its profile is known: the
-- sequential analysis gives it, and every fault-injected concurrent run must give the same.
local function leaf(x) return x + 1 end
local function mid(n)
  local s = 0
  for i = 1, n do s = s + leaf(i) end
  thread.yield()
  return s
end
local function work(k)
  local s = 0
  for i = 1, 2000 * k do s = s + mid(10) end
  return s
end
local hs = {}
for k = 1, 3 do hs[k] = thread.spawn(work, k) end
local s = work(1)
for k = 1, 3 do s = s + hs[k]:join() end
print("total", s)
