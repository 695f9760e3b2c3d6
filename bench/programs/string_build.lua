-- String building: string.format with several conversions, concatenation
-- chains, table.concat of many pieces, string.rep, sub and byte-level
-- checksums over the results. Optional argument: rounds.
local rounds = tonumber(arg and arg[1]) or 32
local checksum = 0
local function mix(s)
  local h = #s
  for i = 1, #s, 13 do h = (h * 31 + s:byte(i)) % 1000003 end
  return h
end
for round = 1, rounds do
  local parts = {}
  for i = 1, 20000 do
    parts[#parts + 1] = string.format("%5d|%-8s|%08.3f|%x", i, "item" .. i % 97, i / 7, i * round)
  end
  local joined = table.concat(parts, "\n")
  checksum = (checksum + mix(joined)) % 1000003
  -- repeated small concatenations (each creates a new string)
  local line = ""
  for i = 1, 3000 do
    line = line .. string.char(97 + i % 26)
    if #line > 200 then line = line:sub(100) end
  end
  checksum = (checksum + mix(line)) % 1000003
  -- building with .. chains and tostring of numbers
  local acc = {}
  for i = 1, 20000 do
    acc[i] = "<" .. i .. ":" .. (i * 3) .. "/" .. tostring(i % 11 == 0) .. ">"
  end
  checksum = (checksum + mix(table.concat(acc))) % 1000003
  -- upper/lower/reverse/rep over medium strings
  local base = string.rep("Tandem Lua ", 500)
  checksum = (checksum + mix(base:upper()) + mix(base:lower():reverse())) % 1000003
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
