-- table.concat with separators, ranges and numbers.
print(table.concat({1, 2, 3}))
print(table.concat({1, 2, 3}, ", "))
print(table.concat({"a", "b", "c"}, "-", 2))
print(table.concat({"a", "b", "c"}, "-", 2, 3))
print("[" .. table.concat({"a", "b"}, "-", 3) .. "]")
print("[" .. table.concat({}, "x") .. "]")
print(table.concat({1.5, 2, "x", 10 // 3}, " "))
print(table.concat({"a", "b", "c"}, "", 1, 1))
print(pcall(table.concat, {1, {}, 3}))
print(pcall(table.concat, {1, 2}, ",", 1, 3))
print(pcall(table.concat, {true}))
-- join of a large list
local parts = {}
for i = 1, 10000 do parts[i] = i % 10 end
local s = table.concat(parts)
print(#s, s:sub(1, 12))
-- concat respects __index (5.4)
local proxy = setmetatable({}, {__index = function(_, i) return "p" .. i end})
print(table.concat(proxy, ",", 1, 3))
-- separators with special characters
print(table.concat({"x", "y"}, "\0"):byte(1, -1))
print(table.concat({"line1", "line2"}, "\n"))
