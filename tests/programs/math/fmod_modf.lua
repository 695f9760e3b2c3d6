-- math.fmod (C semantics: sign of the dividend) and math.modf.
local function show(label, ...) print(label, ...) end
show("fmod(7,3)", math.fmod(7, 3), math.type(math.fmod(7, 3)))
show("fmod(-7,3)", math.fmod(-7, 3))
show("fmod(7,-3)", math.fmod(7, -3))
show("fmod(-7,-3)", math.fmod(-7, -3))
show("fmod(7.5,2)", math.fmod(7.5, 2))
show("fmod(-7.5,2)", math.fmod(-7.5, 2))
show("fmod(5,1.5)", math.fmod(5, 1.5))
show("fmod(minint,-1)", math.fmod(math.mininteger, -1))
show("fmod(1, huge)", math.fmod(1, math.huge))
show("fmod(1.0, 0) nan", math.fmod(1.0, 0) ~= math.fmod(1.0, 0))
print(pcall(math.fmod, 1, 0))
print(pcall(math.fmod, 1))
-- compare fmod with % for negative operands
for _, pair in ipairs({{7, 3}, {-7, 3}, {7, -3}, {-7, -3}}) do
  local a, b = pair[1], pair[2]
  print(a, b, "fmod", math.fmod(a, b), "%", a % b)
end
show("modf(3.7)", math.modf(3.7))
show("modf(-3.7)", math.modf(-3.7))
show("modf(5)", math.modf(5))
show("modf(-0.5)", math.modf(-0.5))
show("modf(huge)", math.modf(math.huge))
show("modf(-huge)", math.modf(-math.huge))
local i, f = math.modf(2.5)
print(math.type(i), math.type(f))
local nanint, nanfrac = math.modf(0 / 0)
print(nanint ~= nanint, nanfrac ~= nanfrac)
