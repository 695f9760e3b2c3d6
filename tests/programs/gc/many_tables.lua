-- Allocates millions of short-lived small tables; memory must stay bounded
-- (checked indirectly: the program must simply finish).
local live = 0
local checksum = 0
for i = 1, 3000000 do
  local t = {i, i + 1, x = i}
  checksum = (checksum + t[1] + t.x) % 1000000007
  if i % 1000000 == 0 then live = live + 1 end
end
print("checksum", checksum, live)
-- keep a bounded window of live objects while churning through many more
local window = {}
for i = 1, 1000000 do
  local old = window[(i + 1) % 1000 + 1]
  window[i % 1000 + 1] = {value = i, prev = old and old.value}
end
local sum = 0
for i = 1, 1000 do sum = sum + window[i].value end
print("window sum", sum)
-- nested structures that become garbage together
local function tree(d)
  if d == 0 then return {} end
  return {tree(d - 1), tree(d - 1)}
end
local function count(t)
  if t[1] == nil then return 1 end
  return 1 + count(t[1]) + count(t[2])
end
local total = 0
for _ = 1, 20 do total = total + count(tree(14)) end
print("tree nodes", total)
