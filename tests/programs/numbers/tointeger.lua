-- math.tointeger, math.type and float->integer conversions.
print(math.tointeger(3.0), math.tointeger(3.5), math.tointeger(3))
print(math.tointeger(-0.0), math.tointeger(2^53), math.tointeger(2^63))
print(math.tointeger(-2^63), math.tointeger(1/0), math.tointeger(0/0))
print(math.tointeger({}), math.tointeger(nil), math.tointeger(true))
print(math.type(1), math.type(1.0), math.type("1"), math.type(nil))
-- float keys are normalised to integers, so these are the same slot
local t = {}
t[3.0] = "three"
print(t[3], math.type(next(t)))
-- string.format %d accepts floats with integral values only
print(string.format("%d", 3.0))
print(pcall(string.format, "%d", 3.5))
-- integer for-loop limits given as floats
local n = 0
for i = 1, 3.9 do n = n + i end
print(n)
-- floor and ceil return integers when they fit
print(math.floor(3.7), math.type(math.floor(3.7)), math.ceil(-3.7), math.floor(-0.0))
print(math.floor(1e100) == 1e100, math.type(math.floor(1e100)))
-- integer division and modulo of floats keep float type
print(7.0 // 2, 7 // 2.0, 7.5 % 2)
print(3 | 0, pcall(function() return 3.5 | 0 end))
print(string.rep("x", 3.0), pcall(string.rep, "x", 2.5))
print(("abc"):sub(2.0, 3.0), pcall(string.sub, "abc", 1.5))
