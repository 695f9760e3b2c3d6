-- Bitwise operators on integers and on floats with integral values.
print(0xF0 & 0x3C, 0xF0 | 0x0F, 0xF0 ~ 0xFF, ~0)
print(1 << 4, 256 >> 4, 1 << 63, 1 << 64, 1 << -1, 2 >> -1)
print(-1 >> 1, -1 >> 63, -1 << 63, 3 >> 64)
print(~5, ~-1, ~math.maxinteger)
print(2.0 & 3, 7 | 8.0, 2^53 | 0, -0.0 | 0)
-- strings are not coerced by bitwise operators in 5.4 (no string metamethod)
print(pcall(function() return "12" & 10 end))
print(math.type(2.0 & 3))
-- precedence: shifts bind weaker than concatenation's neighbours, & > ~ > |
print(1 | 2 ~ 3 & 4)
print(1 << 2 + 1)
print(5 & 3 == 1)
print(0xFF ~ 0xF0 | 0x01)
-- errors
print(pcall(function() return 1.5 & 1 end))
print(pcall(function() return "1.5" | 0 end))
print(pcall(function() return {} ~ 1 end))
print(pcall(function() return 2^63 | 0 end))
-- popcount of a few numbers
local function popcount(x)
  local c = 0
  while x ~= 0 do
    x = x & (x - 1)
    c = c + 1
  end
  return c
end
print(popcount(0), popcount(255), popcount(-1), popcount(math.mininteger))
-- rotate left
local function rotl(x, n) return (x << n) | (x >> (64 - n)) end
print(string.format("%x", rotl(0x8000000000000001, 4)))
