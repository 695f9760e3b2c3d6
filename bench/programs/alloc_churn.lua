-- Allocation churn of mixed object shapes: linked lists built and dropped,
-- small vectors (tables with a hash part), short strings used as keys, and
-- arrays grown by appending. Optional argument: rounds.
local unpack = table.unpack or unpack  -- LuaJIT (Lua 5.1) has a global unpack
local rounds = tonumber(arg and arg[1]) or 78
local checksum = 0
for round = 1, rounds do
  -- a linked list of 20000 nodes, walked then dropped
  local head = nil
  for i = 1, 20000 do head = {value = i, next = head} end
  local s, node = 0, head
  while node do s = s + node.value; node = node.next end
  -- vectors with three fields, reduced pairwise
  local vs = {}
  for i = 1, 20000 do vs[i] = {x = i, y = -i, z = i % 7} end
  local acc = {x = 0, y = 0, z = 0}
  for i = 1, #vs do
    local v = vs[i]
    acc = {x = acc.x + v.x, y = acc.y + v.y, z = acc.z + v.z}
  end
  -- temporary strings and a table keyed by them
  local index = {}
  for i = 1, 10000 do index["k" .. (i % 5000) .. "_" .. round] = i end
  local n = 0
  for _ in pairs(index) do n = n + 1 end
  -- arrays grown one element at a time, then copied
  local arr = {}
  for i = 1, 30000 do arr[#arr + 1] = i * 2 end
  local copy = {unpack(arr, 1, 5000)}
  checksum = (checksum + s + acc.x + acc.y + acc.z + n + #arr + #copy) % 1000000007
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
