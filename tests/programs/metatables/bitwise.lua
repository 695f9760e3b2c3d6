-- Bitwise metamethods: __band __bor __bxor __shl __shr __bnot.
local Bits = {}
local function bits(v) return setmetatable({v = v}, Bits) end
local function val(x) return type(x) == "table" and x.v or x end
Bits.__band = function(a, b) return bits(val(a) & val(b)) end
Bits.__bor = function(a, b) return bits(val(a) | val(b)) end
Bits.__bxor = function(a, b) return bits(val(a) ~ val(b)) end
Bits.__shl = function(a, b) return bits(val(a) << val(b)) end
Bits.__shr = function(a, b) return bits(val(a) >> val(b)) end
Bits.__bnot = function(a) return bits(~val(a)) end
local x, y = bits(12), bits(10)
print((x & y).v, (x | y).v, (x ~ y).v, (x << 2).v, (x >> 2).v, (~x).v)
print((x & 4).v, (255 & x).v, (1 << x).v)
-- floats with fractional parts go to the metamethod instead of erroring
local F = setmetatable({}, {__bor = function(a, b) return "meta bor" end})
print(1.5 | F, F | 1.5)
-- strings do not coerce for bitwise operations, but a metamethod can handle them
local S = setmetatable({}, {__band = function(a, b) return "meta band" end})
print("3" & S)
print(pcall(function() return "3" & 1 end))
-- missing metamethod
print(pcall(function() return setmetatable({}, {}) & 1 end))
