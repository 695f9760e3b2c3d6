-- Regression: x - 0 with x = -0.0 printed -0.0; lua5.4 prints 0.0, because it compiles
-- x - c for a small integer constant c as ADDI x, -c (x + 0). Only the integer constant 0
-- gives a different result than x - c; a float constant 0.0 or a variable holding 0 is a
-- real subtraction (-0.0). Each case runs in a function called many times, so the JIT
-- compiles it too (-Xjit=on), and the interpreter runs it first.
local function cases(z, k, kf)
  return z - 0, z + 0, 0 + z, z - 0.0, z - k, z - kf, z + k, -0.0 - 0, 0 - z, z - -0, z * 1, z / 1
end
local last
for i = 1, 200 do
  last = table.pack(cases(-0.0, 0, 0.0))
end
for i = 1, last.n do io.write(tostring(last[i]), i < last.n and " " or "\n") end
-- integers are unchanged by the rule
local function ints(x) return x - 0, x - 1, x - -1, x - 127, x - 128, x - math.mininteger end
for i = 1, 200 do last = table.pack(ints(math.maxinteger)) end
print(table.unpack(last, 1, last.n))
for i = 1, 200 do last = table.pack(ints(5)) end
print(table.unpack(last, 1, last.n))
-- other floats: x - 0 is x
local function fl(x) return x - 0, x - 3, x - 0.5 end
for _, x in ipairs{0.0, 1.5, -2.25, 1/0, -1/0} do print(fl(x)) end
print(fl(0/0) ~= fl(0/0))
-- a __sub metamethod still sees the constant 0, not an addition
local mt = {__sub = function(a, b) return "sub " .. tostring(b) end, __add = function() return "add" end}
local t = setmetatable({}, mt)
for i = 1, 200 do last = t - 0 end
print(last, t - 0.0, t - 7)
-- strings are converted: "-0.0" - 0 is a float subtraction of -0.0 and 0
print("-0.0" - 0, "-0" - 0, "1e0" - 0)
