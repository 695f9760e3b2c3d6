-- Hash-part workloads: inserting, looking up, updating and deleting string
-- and integer keys in large tables, plus counting with pairs.
-- Optional argument: rounds.
local rounds = tonumber(arg and arg[1]) or 8
local keys = {}
for i = 1, 200000 do keys[i] = "key_" .. (i * 7919 % 1000003) end

local checksum = 0
for round = 1, rounds do
  local t = {}
  for i = 1, #keys do t[keys[i]] = i end
  local found = 0
  for i = 1, #keys, 3 do
    local v = t[keys[i]]
    if v then found = found + v end
  end
  for i = 2, #keys, 2 do t[keys[i]] = nil end
  local remaining = 0
  for _, v in pairs(t) do remaining = remaining + v end
  -- integer keys spread far apart live in the hash part
  local sparse = {}
  for i = 1, 100000 do sparse[i * 1009 + round] = i end
  local s = 0
  for i = 1, 100000, 7 do s = s + sparse[i * 1009 + round] end
  -- counting words with a default of zero
  local counts = {}
  for i = 1, #keys do
    local k = keys[i]:sub(-2)
    counts[k] = (counts[k] or 0) + 1
  end
  local distinct = 0
  for _ in pairs(counts) do distinct = distinct + 1 end
  checksum = (checksum + found + remaining + s + distinct) % 1000000007
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
