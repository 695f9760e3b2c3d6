-- Closures keep their own upvalues alive after the enclosing call returns.
local function counter(start, step)
  local n = start
  return function()
    n = n + step
    return n
  end
end
local c1, c2 = counter(0, 1), counter(100, -10)
print(c1(), c1(), c1(), c2(), c2(), c1())

-- a closure factory producing adders
local function adder(x) return function(y) return x + y end end
local add5, add10 = adder(5), adder(10)
print(add5(1), add10(1), adder(-1)(1))

-- upvalues of upvalues (three levels)
local function outer()
  local a = 1
  return function()
    local b = 10
    return function()
      a = a + 1
      b = b + 1
      return a + b
    end
  end
end
local mid = outer()
local in1, in2 = mid(), mid()
print(in1(), in1(), in2(), in1())

-- composition and currying
local function compose(f, g) return function(...) return f(g(...)) end end
local inc = function(x) return x + 1 end
local dbl = function(x) return x * 2 end
print(compose(inc, dbl)(5), compose(dbl, inc)(5))
local function curry3(f) return function(a) return function(b) return function(c) return f(a, b, c) end end end end
print(curry3(function(a, b, c) return a .. b .. c end)("x")("y")("z"))

-- memoize a function with a closure-held cache
local function memoize(f)
  local cache, calls = {}, 0
  return function(n)
    local v = cache[n]
    if v == nil then calls = calls + 1; v = f(n); cache[n] = v end
    return v
  end, function() return calls end
end
local sq, sqcalls = memoize(function(n) return n * n end)
for i = 1, 5 do sq(i % 3) end
print(sq(2), sqcalls())
