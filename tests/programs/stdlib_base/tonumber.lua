-- tonumber with and without a base.
print(tonumber("10"), tonumber("0x10"), tonumber("  12  "), tonumber("1e2"), tonumber("abc"))
print(tonumber(42), tonumber(4.5), tonumber(nil), tonumber(true), tonumber({}))
print(tonumber("10", 2), tonumber("ff", 16), tonumber("FF", 16), tonumber("zz", 36), tonumber("777", 8))
print(tonumber("8", 8), tonumber("12", 2), tonumber("", 10), tonumber(" 11 ", 2))
print(tonumber("-ff", 16), tonumber("-  ff", 16), tonumber("1.5", 10), tonumber("0x10", 16))
print(tonumber("7fffffffffffffff", 16), tonumber("ffffffffffffffff", 16), tonumber("10000000000000000", 16))
print(tonumber("z", 36), tonumber("Z", 36), tonumber("10", 36))
print(pcall(tonumber, "10", 1))
print(pcall(tonumber, "10", 37))
print(pcall(tonumber, 10, 16))
print(pcall(tonumber))
print(tonumber("1e1", 10), tonumber("10", 10.0))
-- a base conversion routine checked against tonumber
local digits = "0123456789abcdefghijklmnopqrstuvwxyz"
local function tobase(n, b)
  if n == 0 then return "0" end
  local out = {}
  while n > 0 do
    local d = n % b
    table.insert(out, 1, digits:sub(d + 1, d + 1))
    n = n // b
  end
  return table.concat(out)
end
local ok = true
for b = 2, 36 do
  for _, n in ipairs({0, 1, 35, 36, 1000, 123456789}) do
    if tonumber(tobase(n, b), b) ~= n then ok = false; print("mismatch", n, b) end
  end
end
print("round trip", ok, tobase(255, 2), tobase(255, 16), tobase(123456789, 36))
