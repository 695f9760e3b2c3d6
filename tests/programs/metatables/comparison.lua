-- __eq, __lt and __le metamethods.
local V = {}
V.__index = V
local function v(n) return setmetatable({n = n}, V) end
V.__eq = function(a, b) return a.n == b.n end
V.__lt = function(a, b) return a.n < b.n end
V.__le = function(a, b) return a.n <= b.n end

local a, b, c = v(1), v(2), v(1)
print(a == c, a ~= c, a == b, rawequal(a, c))
print(a < b, b < a, a <= c, b <= a, a > b, b >= a)
-- __eq is only tried for two tables (or two userdata)
print(a == 1, 1 == a)
-- __eq results are converted to booleans
local W = {__eq = function() return "yes" end, __lt = function() return nil end}
local w1, w2 = setmetatable({}, W), setmetatable({}, W)
print(w1 == w2, w1 < w2, w1 ~= w2)
-- __le is not emulated with __lt in 5.4
local OnlyLt = {__lt = function(x, y) return x.k < y.k end}
local o1, o2 = setmetatable({k = 1}, OnlyLt), setmetatable({k = 2}, OnlyLt)
print(o1 < o2, pcall(function() return o1 <= o2 end))
-- mixed comparison: table with number uses the table's metamethod
local N = {__lt = function(x, y)
  local xv = type(x) == "table" and x.k or x
  local yv = type(y) == "table" and y.k or y
  return xv < yv
end}
local n5 = setmetatable({k = 5}, N)
print(n5 < 10, 3 < n5, pcall(function() return n5 < "x" end))
-- sorting objects by __lt
local list = {v(5), v(3), v(9), v(1)}
table.sort(list)
local out = {}
for i, x in ipairs(list) do out[i] = x.n end
print(table.concat(out, " "))
-- identical objects do not call __eq
local eqcalls = 0
local E = {__eq = function() eqcalls = eqcalls + 1; return false end}
local e = setmetatable({}, E)
print(e == e, eqcalls, e == setmetatable({}, E), eqcalls)
