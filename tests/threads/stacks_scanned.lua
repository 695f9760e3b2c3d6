-- objects referenced only from parked threads' stacks survive repeated collections
local go = thread.channel()
local hs = {}
for i = 1, 16 do
  hs[i] = thread.spawn(function()
    local t = {}
    for j = 1, 64 do t[j] = string.rep(string.char(64 + i), j) .. "!" end
    local s = table.concat(t, ",")
    go:recv()
    for j = 1, 64 do assert(t[j] == string.rep(string.char(64 + i), j) .. "!") end
    return #s
  end)
end
thread.sleep(0.05)
for _ = 1, 5 do
  local junk = {}
  for j = 1, 20000 do junk[j] = {j} end
  collectgarbage()
end
for _ = 1, 16 do go:send(true) end
local tot = 0
for i = 1, 16 do tot = tot + hs[i]:join() end
print("survived", tot)
