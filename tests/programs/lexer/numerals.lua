-- Numeric literals: integers, floats, hex, exponents, hex floats.
print(0, 42, 0x10, 0XfF, 0xA)
print(3.0, 3., .5, 0.5e1, 1e2, 1E-2, 5e+3)
print(0x1p4, 0x.8, 0xA.8p1, 0x1P-2)
print(math.type(1), math.type(1.0), math.type(1e2), math.type(0x10))
-- integer literals that do not fit wrap (hex) or become floats (decimal)
print(9223372036854775807, math.type(9223372036854775807))
print(9223372036854775808, math.type(9223372036854775808))
print(0xffffffffffffffff, 0x7fffffffffffffff)
print(0x10000000000000000)
print(-9223372036854775808, math.type(-9223372036854775808))
-- spaces and operators around numbers
print(1+2, 3-1, 2*3, 2^2)
local x = 3 print(x-1)
print(1 .. 2)
-- very small and very large
print(1e308, 1e-308, 2e308, 1e-400)
print(0x.1, 0x1.8)
