-- Floored modulo on integers (constant and register divisors, powers of two, the extremes),
-- on floats, and by zero: the JIT's MOD/MODK templates against the interpreter and lua5.4.
local vals = {0, 1, -1, 7, -7, 8, -8, 9223372036854775807, -9223372036854775807 - 1, 5, -5, 3, 13}
local out = {}
for _, a in ipairs(vals) do
  for _, b in ipairs(vals) do
    if b ~= 0 then
      out[#out+1] = a % b
    end
  end
  out[#out+1] = a % 2
  out[#out+1] = a % 8
  out[#out+1] = a % 3
  out[#out+1] = a % -4
  out[#out+1] = a % 1
  out[#out+1] = a % 4611686018427387904
  out[#out+1] = a % -9223372036854775807
end
print(table.concat(out, " "))
local ok, err = pcall(function(x) return x % 0 end, 5)
print(ok, err:match("attempt to perform 'n%%0'"))
print(5.5 % 2, -5.5 % 2, 5 % 2.5)
