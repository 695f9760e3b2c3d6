-- __tostring and __name control tostring/print; __metatable protects.
local P = {__tostring = function(p) return "P<" .. p.id .. ">" end}
local p = setmetatable({id = 7}, P)
print(p, tostring(p))
print(string.format("%s|%s", p, "x"))
-- __tostring must return a string (a number is accepted as one)
local num = setmetatable({}, {__tostring = function() return 42 end})
print(pcall(tostring, num))
local bad = setmetatable({}, {__tostring = function() return {} end})
print(pcall(tostring, bad))
-- __name is used when there is no __tostring: check only the prefix
local named = setmetatable({}, {__name = "MyType"})
print((tostring(named):gsub("0x%x+", "ADDR"):gsub(": [%x]+$", ": ADDR")))
print(tostring(named):match("^MyType: ") ~= nil)
-- a non-string __name is ignored
local odd = setmetatable({}, {__name = 5})
print(tostring(odd):match("^table: ") ~= nil)
-- __metatable hides and protects the metatable
local guarded = setmetatable({}, {__metatable = "locked", __index = {k = "v"}})
print(getmetatable(guarded), guarded.k)
print(pcall(setmetatable, guarded, {}))
local guarded2 = setmetatable({}, {__metatable = false})
print(getmetatable(guarded2))
print(pcall(setmetatable, guarded2, nil))
-- setmetatable returns its first argument; nil removes the metatable
local t = {}
print(setmetatable(t, P) == t, getmetatable(t) == P)
setmetatable(t, nil)
print(getmetatable(t))
print(pcall(setmetatable, t, 5))
print(pcall(setmetatable, 5, {}))
-- the string metatable
print(type(getmetatable("")), getmetatable("").__index == string)
-- __tostring used by print via tostring, also inside table.concat? (no: error)
print(pcall(table.concat, {p}))
