-- math.deg and math.rad, and the functions Debian's lua5.4 keeps for compatibility with 5.2
-- (LUA_COMPAT_MATHLIB): atan2, cosh, sinh, tanh, pow, frexp, ldexp, log10.
local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do
    local v = t[i]
    t[i] = math.type(v) == "float" and string.format("%.14g", v) or tostring(v)
  end
  print(table.concat(t, " ", 1, t.n))
end
show(math.deg(math.pi), math.deg(1), math.deg(0), math.deg(-math.pi / 2), math.deg(3))
show(math.rad(180), math.rad(90), math.rad(0), math.rad(-45), math.rad(1))
show(math.atan2(1, 1), math.atan2(-1, -1), math.atan2(0, -1), math.atan2(1, 0))
show(math.cosh(0), math.cosh(1), math.sinh(0), math.sinh(-1), math.tanh(0.5), math.tanh(100))
show(math.pow(2, 10), math.pow(2, 0.5), math.pow(-8, 1 / 3), math.pow(0, 0), math.pow(10, -2))
show(math.frexp(8), math.frexp(0), math.frexp(-3.5), math.frexp(1e300), math.frexp(0.1))
show(math.ldexp(0.5, 4), math.ldexp(1, -1), math.ldexp(3, 0), math.ldexp(1, 1023), math.ldexp(1, 2000))
show(math.log10(1000), math.log10(2), math.log10(0), math.log10(0.001))
show(math.type(math.deg(1)), math.type(math.pow(2, 2)), math.type(select(2, math.frexp(4))))
show(pcall(math.ldexp, 1, 1.5))
show(pcall(math.pow, 2))
show(pcall(math.deg, "x"))
show(pcall(math.frexp))
