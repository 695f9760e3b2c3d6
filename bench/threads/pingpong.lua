-- channel ping-pong: N round trips (arg[1]) between two threads over two channels
local N = tonumber(arg[1]) or 20000
local ping, pong = thread.channel(1), thread.channel(1)
local h = thread.spawn(function()
  for _ = 1, N do pong:send(ping:recv() + 1) end
end)
local v = 0
for _ = 1, N do
  ping:send(v)
  v = pong:recv()
end
h:join()
assert(v == N)
