-- table.pack, table.unpack and table.move.
local p = table.pack("a", nil, "c")
print(p.n, p[1], p[2], p[3])
print(table.unpack({1, 2, 3}, 2, 3))
print(table.unpack({}, 1, 0))
-- table.move within the same table and between tables
local t = {1, 2, 3, 4, 5}
table.move(t, 2, 4, 1)
print(table.concat(t, ","))
t = {1, 2, 3, 4, 5}
table.move(t, 1, 3, 3)
print(table.concat(t, ","))
local dst = table.move({"x", "y", "z"}, 1, 3, 2, {"a"})
print(table.concat(dst, ","))
print(table.move({}, 1, 0, 1, {"unchanged"})[1])
print(pcall(table.move, {}, 1, math.maxinteger, 2))
-- move honours metamethods
local log = {}
local src = setmetatable({}, {__index = function(_, k) return k * 10 end})
local sink = setmetatable({}, {__newindex = function(_, k, v) log[#log + 1] = k .. ":" .. v end})
table.move(src, 1, 3, 5, sink)
print(table.concat(log, " "))
-- copy a list with move
local orig = {}
for i = 1, 100 do orig[i] = i * i end
local copy = table.move(orig, 1, #orig, 1, {})
print(#copy, copy[100], copy ~= orig)
