-- Sieve of Eratosthenes repeated over a boolean array: tight numeric loops,
-- array-part table stores and loads. Optional argument: repetitions.
local function sieve(n)
  local composite = {}
  for i = 1, n do composite[i] = false end
  local count = 0
  for i = 2, n do
    if not composite[i] then
      count = count + 1
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count
end

local reps = tonumber(arg and arg[1]) or 40
local total = 0
for _ = 1, reps do total = total + sieve(1000000) end
print(string.format("primes below 1e6: %d (x%d = %d)", sieve(1000000), reps, total))
