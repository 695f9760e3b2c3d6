-- Allocates until the heap cap (-Xgc.maxheap) is hit; pcall catches the error, and the
-- memory of the failed call is given back.
local ok, err = pcall(function()
  local t = {}
  for i = 1, 1e9 do t[i] = {i} end
end)
print("caught", ok, err)
print(#string.rep("x", 1000))
local t = {}
for i = 1, 1e9 do t[i] = {i} end
