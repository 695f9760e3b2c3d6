-- The heap cap (-Xgc.maxheap): a request beyond it raises "not enough memory", which pcall
-- catches and the program goes on; then it allocates until the cap and dies of it.
local ok, err = pcall(string.rep, "x", 1 << 30)
print("caught", ok, err)
print(#string.rep("x", 1000))
local t = {}
for i = 1, 1e9 do t[i] = {i} end
