-- Conversions from strings to numbers: what is accepted and rejected.
local inputs = {
  "10", "  12  ", "0x10", "0X1f", "1e2", "1E+2", ".5", "5.", "0x.8p1", "0x1p-1",
  "-7", "+7", "- 7", "1e", "e1", "0x", "abc", "", " ", "1 2", "12a", "inf", "nan",
  "1.5e308", "1e309", "\t\n 3 \n", "0b101", "1_000", "0x1P+4", "00012", "1.2.3",
  "9007199254740993", "-0", "-0.0", "0x-1",
}
for i, s in ipairs(inputs) do
  local n = tonumber(s)
  print(i, string.format("%q", s), n, math.type(n))
end
-- arithmetic coercion follows the same rules
print("10" + 0, "0x10" + 0, "1e1" + 0)
print(pcall(function() return "1e" + 0 end))
-- tostring/tonumber round trip for floats printed with %.17g
local vals = {0.1, 1/3, 2^-20, 123.456, 1e22}
for _, v in ipairs(vals) do
  local s = string.format("%.17g", v)
  print(s, tonumber(s) == v)
end
