-- table.pack / table.unpack with nils and explicit ranges.
local p = table.pack(1, nil, 3, nil)
print(p.n, p[1], p[2], p[3], p[4])
print(table.unpack(p, 1, p.n))
local e = table.pack()
print(e.n, next(e, "n") == nil)
print(table.unpack({1, 2, 3}))
print(table.unpack({1, 2, 3}, 2))
print(table.unpack({1, 2, 3}, 2, 5))
print(table.unpack({1, 2, 3}, 3, 2))
print(select("#", table.unpack({}, 1, 3)))
print(table.unpack({"a", "b"}, -1, 1))
-- round trip through varargs preserves trailing nils when n is used
local function roundtrip(...)
  local t = table.pack(...)
  return table.unpack(t, 1, t.n)
end
print(select("#", roundtrip(nil, nil, nil)))
-- unpack of a huge range errors
print(pcall(table.unpack, {}, 1, 1e8))
print(pcall(table.unpack, {}, math.mininteger, math.maxinteger))
-- unpack respects __index
local proxy = setmetatable({}, {__index = function(_, k) return k * 2 end})
print(table.unpack(proxy, 1, 4))
