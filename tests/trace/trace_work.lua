-- Work for the trace tests (run_trace_tests.py): threads that call functions (events for a
-- profiler), allocate (collections) and yield (green switches).
--   trace_work.lua [threads] [rounds]    ends after the rounds
--   trace_work.lua forever               prints "ready" after one round each, then loops
--   trace_work.lua switches N            two threads yield N times each, nothing else
if arg[1] == "switches" then
  local n = tonumber(arg[2])
  local function yielder() for i = 1, n do thread.yield() end return n end
  local a, b = thread.spawn(yielder), thread.spawn(yielder)
  print(a:join() + b:join())
  return
end
local nthreads = tonumber(arg[1]) or 3
local rounds = tonumber(arg[2]) or 40
local forever = arg[1] == "forever"
if forever then nthreads, rounds = 2, math.huge end

local function leaf(x) return { x, tostring(x) } end   -- allocates: collections come
local function work(k)
  local keep
  local r = 0
  while r < rounds do
    r = r + 1
    for i = 1, 2000 do keep = leaf(i + k) end
    if r % 10 == 0 then collectgarbage() end
    thread.yield()
    if forever and r == 1 and k == 1 then print("ready"); io.stdout:flush() end
  end
  return #keep
end

local hs = {}
for k = 1, nthreads do hs[k] = thread.spawn(work, k) end
local s = 0
for k = 1, nthreads do s = s + hs[k]:join() end
print(s)
