-- Arithmetic metamethods: __add __sub __mul __div __mod __pow __unm __idiv.
local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({x = x, y = y}, Vec) end
local function lift(a) if type(a) == "number" then return vec(a, a) end return a end
Vec.__add = function(a, b) a, b = lift(a), lift(b); return vec(a.x + b.x, a.y + b.y) end
Vec.__sub = function(a, b) a, b = lift(a), lift(b); return vec(a.x - b.x, a.y - b.y) end
Vec.__mul = function(a, b) a, b = lift(a), lift(b); return vec(a.x * b.x, a.y * b.y) end
Vec.__div = function(a, b) a, b = lift(a), lift(b); return vec(a.x / b.x, a.y / b.y) end
Vec.__mod = function(a, b) a, b = lift(a), lift(b); return vec(a.x % b.x, a.y % b.y) end
Vec.__pow = function(a, b) a, b = lift(a), lift(b); return vec(a.x ^ b.x, a.y ^ b.y) end
Vec.__idiv = function(a, b) a, b = lift(a), lift(b); return vec(a.x // b.x, a.y // b.y) end
Vec.__unm = function(a) return vec(-a.x, -a.y) end
Vec.__tostring = function(a) return "(" .. tostring(a.x) .. "," .. tostring(a.y) .. ")" end

local p, q = vec(7, 9), vec(2, 4)
print(tostring(p + q), tostring(p - q), tostring(p * q), tostring(p / q))
print(tostring(p % q), tostring(q ^ 2), tostring(p // q), tostring(-p))
print(tostring(p + 1), tostring(10 - q), tostring(2 * p))
-- the left operand's metamethod is tried first, then the right's
local L = setmetatable({}, {__add = function() return "left" end})
local R = setmetatable({}, {__add = function() return "right" end})
print(L + R, R + L, 1 + R, L + 1)
-- metamethods receive operands in source order
local order = setmetatable({}, {__sub = function(a, b)
  return (type(a) == "table" and "T" or tostring(a)) .. "-" .. (type(b) == "table" and "T" or tostring(b))
end})
print(order - 5, 5 - order)
-- strings with arithmetic: string metamethods convert, but not for tables
print(pcall(function() return {} + 1 end))
print(pcall(function() return "10" + {} end))
-- a number-like class used in a loop
local acc = vec(0, 0)
for i = 1, 10 do acc = acc + vec(i, -i) end
print(tostring(acc))
