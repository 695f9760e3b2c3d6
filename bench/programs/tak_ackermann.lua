-- Takeuchi and Ackermann functions: deep non-tail recursion with several
-- arguments, many calls per unit of work. Optional argument: repetitions.
local function tak(x, y, z)
  if y >= x then return z end
  return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
end

local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end

local reps = tonumber(arg and arg[1]) or 24
local sum = 0
for i = 1, reps do
  sum = sum + tak(24, 16, 8 + i % 2)
end
print(string.format("tak sum = %d", sum))
local acks = 0
for i = 1, reps do
  acks = acks + ack(3, 7 + i % 2)
end
for i = 1, math.floor(reps / 6) + 1 do
  acks = acks + ack(2, 1500 + i)
end
print(string.format("ack sum = %d", acks))
