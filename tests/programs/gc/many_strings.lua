-- Creates millions of distinct short strings and some long ones.
local n = 0
local acc = 0
for i = 1, 1000000 do
  local s = "key" .. i
  if #s > 8 then n = n + 1 end
  acc = (acc + s:byte(-1)) % 65536
end
print("long keys", n, acc)
-- string interning: equal strings created separately are equal keys
local t = {}
for i = 1, 100000 do t["k" .. (i % 1000)] = i end
local c = 0
for _ in pairs(t) do c = c + 1 end
print("distinct keys", c)
-- large strings made and dropped repeatedly
local total = 0
for i = 1, 200 do
  local big = string.rep("x", 100000 + i)
  total = total + #big
end
print("large total", total)
-- concatenation in a loop (quadratic copying, but bounded memory)
local s = ""
for i = 1, 5000 do s = s .. "ab" end
print(#s)
-- table.concat of many generated strings
local parts = {}
for i = 1, 200000 do parts[i] = tostring(i) end
local joined = table.concat(parts, ",")
print(#joined, joined:sub(1, 20))
