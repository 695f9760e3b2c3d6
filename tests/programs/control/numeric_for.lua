-- Numeric for loops: integer and float, steps, edge cases.
local function collect(a, b, c)
  local out = {}
  if c then
    for i = a, b, c do out[#out + 1] = tostring(i) end
  else
    for i = a, b do out[#out + 1] = tostring(i) end
  end
  return table.concat(out, " ")
end
print(collect(1, 5))
print(collect(5, 1))
print(collect(5, 1, -1))
print(collect(1, 10, 3))
print(collect(10, 1, -4))
print(collect(1.0, 3))
print(collect(1, 2, 0.5))
print(collect(0.1, 0.5, 0.1))
print(collect(3, 3))
print(collect(-3, -1))
-- overflow edges: the loop stops exactly at the limit and does not wrap
print(collect(math.maxinteger - 2, math.maxinteger))
print(collect(math.mininteger + 2, math.mininteger, -1))
print(collect(math.maxinteger - 1, math.huge) == tostring(math.maxinteger - 1) .. " " .. tostring(math.maxinteger))
print(collect(1, 0.5), "(empty)")
print(collect(math.mininteger, math.mininteger + 4, 2))
-- large steps do not overflow
print(collect(0, math.maxinteger, math.maxinteger // 2))
-- the control variable is a fresh local; changing it does not affect the loop
local iters = 0
for i = 1, 3 do
  local before = i
  i = i * 10
  iters = iters + 1
  print("iteration", before, i)
end
print("iters", iters)
-- loop bounds are evaluated once
local limit = 3
for i = 1, limit do limit = 10 end
print("limit now", limit)
print(pcall(function() for i = 1, 10, 0 do end end))
print(pcall(function() for i = "a", 2 do end end))
print(pcall(function() for i = 1, {} do end end))
-- types of the control variable
for i = 1, 1 do print(math.type(i)) end
for i = 1.0, 1 do print(math.type(i)) end
for i = 1, 1, 1.0 do print(math.type(i)) end
