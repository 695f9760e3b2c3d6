-- producer -> two workers -> consumer, bounded channels
local src, mid, out = thread.channel(8), thread.channel(4), thread.channel(2)
local N = 20000
local producer = thread.spawn(function()
  for i = 1, N do src:send(i) end
  src:close()
end)
local workers = {}
for w = 1, 2 do
  workers[w] = thread.spawn(function()
    local n = 0
    while true do
      local v = src:recv()
      if v == nil then break end
      mid:send(v * v)
      n = n + 1
    end
    return n
  end)
end
local consumer = thread.spawn(function()
  local sum, n = 0, 0
  while true do
    local v = mid:recv()
    if v == nil then break end
    sum = sum + v
    n = n + 1
  end
  out:send(sum)
  out:send(n)
  out:close()
end)
producer:join()
local done = workers[1]:join() + workers[2]:join()
mid:close()
consumer:join()
print("items", done, out:recv(), out:recv(), out:recv())
-- sending on a closed channel is an error; receiving drains, then gives nil
local c = thread.channel(3)
c:send(1)
c:send(2)
c:close()
print(pcall(c.send, c, 3))
print(c:recv(), c:recv(), c:recv())
-- unbuffered: send waits for the receiver
local u = thread.channel()
local got = {}
local r = thread.spawn(function() for i = 1, 3 do got[i] = u:recv() end end)
for i = 1, 3 do u:send(i * 10) end
r:join()
print(got[1], got[2], got[3])
