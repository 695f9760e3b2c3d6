-- Allocates until the heap cap (-Xgc.maxheap) is hit; pcall catches the error, and the
-- memory of the failed call is given back.
local ok, err = pcall(function()
  local t = {}
  for i = 1, 1e9 do t[i] = {i} end
end)
print("caught", ok, err)
-- The collector is conservative: a stale word left in the C stack by the failed call could
-- keep its table alive; a few calls overwrite that stack area before the check.
for _ = 1, 3 do collectgarbage() end
print(#string.rep("x", 1000))
local t = {}
for i = 1, 1e9 do t[i] = {i} end
