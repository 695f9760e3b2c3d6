-- channel ping-pong of 100,000 messages
local ping, pong = thread.channel(), thread.channel()
local N = 50000
local h = thread.spawn(function()
  local sum = 0
  for _ = 1, N do
    local v = ping:recv()
    sum = sum + v
    pong:send(v + 1)
  end
  return sum
end)
local total = 0
for i = 1, N do
  ping:send(i)
  total = total + pong:recv()
end
print(h:join(), total)
