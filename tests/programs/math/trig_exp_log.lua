-- Trigonometry, exponentials and logarithms (printed at a fixed precision).
local function p(label, v) print(label, string.format("%.10f", v)) end
p("sin(pi/6)", math.sin(math.pi / 6))
p("cos(pi/3)", math.cos(math.pi / 3))
p("tan(pi/4)", math.tan(math.pi / 4))
p("asin(1)", math.asin(1))
p("acos(0)", math.acos(0))
p("atan(1)", math.atan(1))
p("atan(1, -1)", math.atan(1, -1))
p("atan(-1, -1)", math.atan(-1, -1))
p("atan(0, -1)", math.atan(0, -1))
p("atan(1, 0)", math.atan(1, 0))
p("exp(1)", math.exp(1))
p("exp(0)", math.exp(0))
p("log(e)", math.log(math.exp(1)))
p("log(100, 10)", math.log(100, 10))
p("log(8, 2)", math.log(8, 2))
p("log(1024, 2)", math.log(1024, 2))
p("log(27, 3)", math.log(27, 3))
p("log(1)", math.log(1))
print("log(0)", math.log(0), "log(-1) is nan", math.log(-1) ~= math.log(-1))
print("exp(1000)", math.exp(1000), "exp(-1000)", math.exp(-1000))
print(math.type(math.sin(0)), math.sin(0), math.cos(0))
-- identities over a range of angles
local maxerr = 0
for i = -100, 100 do
  local x = i / 10
  local e = math.abs(math.sin(x) ^ 2 + math.cos(x) ^ 2 - 1)
  if e > maxerr then maxerr = e end
end
print("sin^2+cos^2 within 1e-12", maxerr < 1e-12)
local maxerr2 = 0
for i = 1, 100 do
  local x = i * 0.37
  local e = math.abs(math.exp(math.log(x)) - x) / x
  if e > maxerr2 then maxerr2 = e end
end
print("exp(log(x)) within 1e-12", maxerr2 < 1e-12)
-- degrees and radians via pi
print(string.format("%.6f %.6f", math.pi / 180 * 90, 180 / math.pi * (math.pi / 2)))
