-- Integer arithmetic wraps around (two's complement); floats do not.
local max, min = math.maxinteger, math.mininteger
print(max + 1 == min, min - 1 == max, max * 2, min * -1)
print(max + 1.0, min - 1.0)
print(-min == min, math.abs(min), min // -1, min % -1)
print(max // 1, max // -1, min // 1)
print(math.ult(1, -1), math.ult(-1, 1), math.ult(max, min))
-- multiplication overflow (an LCG with wraparound)
local x = 12345
for i = 1, 10 do
  x = x * 6364136223846793005 + 1442695040888963407
end
print(x)
-- string to number of out-of-range integers gives floats
print(tonumber("9223372036854775807"), tonumber("9223372036854775808"))
print(math.type(tonumber("9223372036854775808")), tonumber("-9223372036854775808"))
print(tonumber("0x7fffffffffffffff"), tonumber("0xffffffffffffffff"), tonumber("0x1ffffffffffffffff"))
-- comparisons between large integers and floats are exact
print(max < 2^63, max + 0.0 == 2^63, max == 2^63, (max - 1) < max + 0.0)
print(2^53 + 1 == (2^53 | 0) + 1, (2^53 | 0) + 1 == 2^53)
-- sums that overflow
local s = 0
for i = 1, 20 do s = s + (max // 10) end
print(s)
