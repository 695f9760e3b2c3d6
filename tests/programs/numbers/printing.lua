-- How numbers are converted to text by print/tostring (%.14g for floats,
-- with ".0" added to floats that look like integers).
print(1e15, 1e16, 2^53, 0.1, -0.0, 1/0, -1/0, 100, 100.0, 3.14159265358979)
print(1e14, 1e100, 1e-5, 123456789012345, 1234567890123456.0)
print(2^63, -2^63, 2^24, 2^-10)
print(tostring(2^63), tostring(-0.0), tostring(1e300 * 1e10))
print(0.1 + 0.7, 1 / 3, 2 / 3, 10 / 2)
print(math.pi, -math.pi, math.huge, -math.huge)
print(3.0, -3.0, 3.5, 1e2, 12345.678)
print(math.maxinteger, math.mininteger)
print(255 // 1, 255 / 1, 7 // 1.0)
print(tostring(0/0) == tostring(0/0), string.find(tostring(0/0), "nan") ~= nil)
print(string.format("%.17g", 0.1), string.format("%.3f", 2/3))
print(1e15 + 0.5, 123456.5, -1.5e-7)
-- tostring of integers vs floats with the same value
for _, v in ipairs({1, 1.0, -1, -1.0, 0, 0.0, 2^31, 2^31 | 0}) do
  io.write(tostring(v), " ")
end
print()
