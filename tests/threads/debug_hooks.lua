-- Debug hooks belong to the coroutine that sets them: each language thread (native, or green
-- threads sharing a carrier) counts only its own line events, while another thread runs
-- unhooked beside it, and a thread's hook state is not the spawner's.
local function work(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7
  end
  return s
end

local function hooked(n)
  local lines = 0
  debug.sethook(function() lines = lines + 1 end, "l")
  local s = work(n)
  debug.sethook()
  return s, lines
end

debug.sethook(function() end, "c")
local threads = {}
for t = 1, 4 do
  if t % 2 == 0 then
    threads[t] = thread.spawn(hooked, 1000 * t)
  else
    threads[t] = thread.spawn(function(n) return work(n), debug.gethook() end, 1000 * t)
  end
end
debug.sethook()
for t = 1, 4 do print(t, threads[t]:join()) end
print(debug.gethook())
