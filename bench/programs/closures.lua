-- Closure-heavy code: iterator factories, higher-order map/filter/reduce,
-- function composition and partial application, closures capturing loop
-- variables. Optional argument: rounds.
local function range(n)
  local i = 0
  return function()
    i = i + 1
    if i <= n then return i end
  end
end
local function map(f, t) local r = {} for i = 1, #t do r[i] = f(t[i]) end return r end
local function filter(p, t) local r = {} for i = 1, #t do if p(t[i]) then r[#r + 1] = t[i] end end return r end
local function reduce(f, acc, t) for i = 1, #t do acc = f(acc, t[i]) end return acc end
local function compose(f, g) return function(x) return f(g(x)) end end
local function partial(f, a) return function(b) return f(a, b) end end
local function add(a, b) return a + b end
local function mul(a, b) return a * b end

local rounds = tonumber(arg and arg[1]) or 640
local checksum = 0
for round = 1, rounds do
  local data = {}
  for i in range(10000) do data[#data + 1] = i end
  local inc = partial(add, round)
  local triple = partial(mul, 3)
  local f = compose(triple, inc)
  local mapped = map(f, data)
  local evens = filter(function(x) return x % 2 == 0 end, mapped)
  local total = reduce(add, 0, evens)
  -- closures capturing per-iteration locals
  local fns = {}
  for i = 1, 2000 do fns[i] = function() return i * round end end
  local s = 0
  for i = 1, #fns do s = s + fns[i]() end
  -- a counter object made of closures sharing an upvalue
  local function counter()
    local n = 0
    return function() n = n + 1 return n end, function() return n end
  end
  local incr, get = counter()
  for _ = 1, 5000 do incr() end
  checksum = (checksum + total + s + get()) % 1000000007
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
