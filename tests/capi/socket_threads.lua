-- lua-socket between two language threads: a TCP echo server in one thread, clients in
-- another, over loopback. The accept and receive waits block (timeouts of seconds) while
-- the other thread must run: under green threads on one carrier that works only if the
-- wait does not stall the carrier (vm/capi/vm_capi_block.c). Collections happen meanwhile
-- (the garbage each round makes). lua5.4 has no threads: the expectation is written here.
local socket = require "socket"
local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
server:settimeout(10)
local ROUNDS, CLIENTS = 50, 3

local srv = thread.spawn(function()
  local served = 0
  for _ = 1, CLIENTS do
    local conn = assert(server:accept())
    conn:settimeout(10)
    while true do
      local line, err = conn:receive()
      if not line then assert(err == "closed", err) break end
      local junk = {}
      for i = 1, 50 do junk[i] = {i, tostring(i)} end -- garbage: collections during waits
      assert(conn:send(line:reverse() .. "\n"))
      served = served + 1
    end
    conn:close()
  end
  return served
end)

local cli = thread.spawn(function()
  local ok = 0
  for c = 1, CLIENTS do
    local s = assert(socket.connect("127.0.0.1", port))
    s:settimeout(10)
    for i = 1, ROUNDS do
      local msg = ("client %d message %d %s"):format(c, i, string.rep("z", i))
      assert(s:send(msg .. "\n"))
      local back = assert(s:receive())
      if back == msg:reverse() then ok = ok + 1 end
    end
    s:close()
  end
  return ok
end)

print("client ok", cli:join())
print("server served", srv:join())
server:close()
-- socket.sleep in a thread lets the other thread run (green: the carrier is not held)
local ticks = 0
local ticker = thread.spawn(function() for _ = 1, 5 do ticks = ticks + 1; thread.sleep(0.001) end end)
socket.sleep(0.2)
ticker:join()
print("ticks", ticks)
