-- Text processing with patterns: gsub with string/function/table
-- replacements, find with captures, gmatch word counting, over a generated
-- corpus. Optional argument: rounds.
local words = {"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing",
  "elit", "sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et",
  "dolore", "magna", "aliqua", "Tandem", "profiler", "buffer", "analysis", "42", "2024"}
local seed = 7
local function rnd(n) seed = (seed * 16807) % 2147483647; return seed % n + 1 end
local lines = {}
for i = 1, 3000 do
  local w = {}
  for j = 1, 8 + rnd(8) do w[j] = words[rnd(#words)] end
  lines[i] = table.concat(w, " ") .. (i % 5 == 0 and "." or ",") .. " key" .. i .. "=" .. rnd(1000)
end
local text = table.concat(lines, "\n")

local rounds = tonumber(arg and arg[1]) or 42
local checksum = 0
for round = 1, rounds do
  -- word frequencies
  local freq = {}
  for w in text:gmatch("%a+") do
    local lw = w:lower()
    freq[lw] = (freq[lw] or 0) + 1
  end
  local fsum = 0
  for _, c in pairs(freq) do fsum = fsum + c * c end
  -- key=value extraction
  local kv = 0
  for k, v in text:gmatch("(key%d+)=(%d+)") do kv = kv + #k + tonumber(v) end
  -- replacements
  local capitalised = text:gsub("%f[%a](%a)(%a*)", function(a, b) return a:upper() .. b end)
  local numbers = select(2, text:gsub("%d+", "#"))
  local swapped = text:gsub("(%a+) (%a+)", "%2 %1")
  local mapped = text:gsub("%a+", {lorem = "L", ipsum = "I", tandem = "T"})
  -- find with plain and pattern search
  local pos, hits = 1, 0
  while true do
    local s, e = text:find("dolor", pos, true)
    if not s then break end
    hits = hits + 1
    pos = e + 1
  end
  local _, _, firstkey = text:find("(key%d+)=1%d%d", 1 + round)
  checksum = (checksum + fsum + kv + #capitalised + numbers + #swapped + #mapped + hits
              + #(firstkey or "")) % 1000000007
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
