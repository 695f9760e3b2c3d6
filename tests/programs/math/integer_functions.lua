-- math.tointeger, math.type, math.ult and integer limits.
print(math.type(1), math.type(1.0), math.type("1"), math.type({}))
print(pcall(math.type))
print(math.tointeger(5.0), math.tointeger(5.5), math.tointeger(-0.0), math.tointeger(2^62))
print(math.ult(1, 2), math.ult(-1, 2), math.ult(2, -1), math.ult(0, 0))
print(math.maxinteger + 1 == math.mininteger, math.maxinteger // -1, math.mininteger // 1)
print(math.maxinteger + 0.0, math.mininteger + 0.0)
print(math.abs(-0.0), math.max(-0.0, 0.0), math.min(0, -0))
-- unsigned comparisons with ult sort numbers as unsigned 64-bit values
local nums = {-1, 1, math.mininteger, math.maxinteger, 0}
table.sort(nums, math.ult)
print(table.concat(nums, " "))
-- unsigned printing with %u-like helper via floor division on negatives
local function tounsigned(n)
  if n >= 0 then return tostring(n) end
  local q = (n >> 1) // 5
  local r = n - q * 10
  return tostring(q) .. tostring(r)
end
print(tounsigned(-1), tounsigned(math.mininteger), tounsigned(12))
