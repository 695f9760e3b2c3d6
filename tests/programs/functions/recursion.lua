-- Recursive functions: local recursion, mutual recursion, memoisation.
local function fact(n)
  if n <= 1 then return 1 end
  return n * fact(n - 1)
end
print(fact(10), fact(20), fact(21))

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
print(fib(20))

local is_even, is_odd
function is_even(n) if n == 0 then return true end return is_odd(n - 1) end
function is_odd(n) if n == 0 then return false end return is_even(n - 1) end
print(is_even(10), is_odd(7), is_even(7))

local memo = {}
local function mfib(n)
  if n < 2 then return n end
  local v = memo[n]
  if v then return v end
  v = mfib(n - 1) + mfib(n - 2)
  memo[n] = v
  return v
end
print(mfib(90))

-- Ackermann and a recursive permutation generator
local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end
print(ack(2, 3), ack(3, 3))

local function permute(a, n, out)
  if n == 0 then
    out[#out + 1] = table.concat(a)
    return
  end
  for i = 1, n do
    a[n], a[i] = a[i], a[n]
    permute(a, n - 1, out)
    a[n], a[i] = a[i], a[n]
  end
end
local perms = {}
permute({"a", "b", "c"}, 3, perms)
table.sort(perms)
print(#perms, table.concat(perms, " "))

-- a global function calling itself through the global name
function gcount(n) if n == 0 then return 0 end return 1 + gcount(n - 1) end
print(gcount(50))
