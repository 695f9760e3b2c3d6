-- a thread spinning in a loop does not starve the others (green threads are preempted)
local stop = false
local spinner = thread.spawn(function()
  local n = 0
  while not stop do n = n + 1 end
  return n > 0
end)
local calls = 0
local function f() calls = calls + 1 end
local recursive = thread.spawn(function() for _ = 1, 1000 do f() end return calls end)
print("other", recursive:join())
stop = true
print("spinner", spinner:join())
