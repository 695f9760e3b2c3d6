-- math.floor/ceil/abs/max/min/sqrt/huge/pi and their result subtypes.
local function show(label, v) print(label, v, math.type(v)) end
show("floor 3.7", math.floor(3.7))
show("floor -3.7", math.floor(-3.7))
show("floor 5", math.floor(5))
show("ceil 3.2", math.ceil(3.2))
show("ceil -3.2", math.ceil(-3.2))
show("floor 1e100", math.floor(1e100))
show("ceil -0.5", math.ceil(-0.5))
show("abs -5", math.abs(-5))
show("abs -5.5", math.abs(-5.5))
show("abs minint", math.abs(math.mininteger))
show("max", math.max(3, 7.5, -1))
show("max ints", math.max(3, 7, -1))
show("min", math.min(3, 7.5, -1))
show("min mixed", math.min(1, 1.0))
show("max mixed", math.max(1.0, 1))
show("sqrt 16", math.sqrt(16))
show("sqrt 2", math.sqrt(2))
show("huge", math.huge)
show("-huge", -math.huge)
show("pi", math.pi)
show("maxinteger", math.maxinteger)
show("mininteger", math.mininteger)
print(pcall(math.max))
print(pcall(math.floor, "x"))
print(math.floor("3.7"), math.abs("-2"))
print(math.sqrt(-1) ~= math.sqrt(-1), math.max(0 / 0, 1) == 1 or math.max(0 / 0, 1) ~= math.max(0 / 0, 1))
-- rounding helper built on floor
local function round(x) return math.floor(x + 0.5) end
print(round(2.5), round(-2.5), round(0.49999), round(1e15 + 0.3))
-- integer square root by Newton's method checked against math.sqrt
local bad = 0
for n = 0, 10000 do
  local r = math.floor(math.sqrt(n))
  if r * r > n or (r + 1) * (r + 1) <= n then bad = bad + 1 end
end
print("isqrt mismatches", bad)
