-- a thread spinning in a loop does not starve the others (green threads are preempted)
local stop, started = false, false
local spinner = thread.spawn(function()
  local n = 0
  while not stop do n = n + 1; started = true end
  return n > 0
end)
local calls = 0
local function f() calls = calls + 1 end
local recursive = thread.spawn(function() for _ = 1, 1000 do f() end return calls end)
print("other", recursive:join())
-- the spinner may not have run yet (a carrier was busy, or its first call was compiled):
-- stop it only once it spins, so that "true" below does not depend on timing
while not started do thread.yield() end
stop = true
print("spinner", spinner:join())
