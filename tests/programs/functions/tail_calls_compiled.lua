-- Tail calls and returns as compiled code makes them (jit/jit_tpl_call.c): a TAILCALL to a
-- compiled Lua function of exactly the arguments given is made inline, and so is a return
-- to a caller that wants all the results (a call that is the last argument of another call,
-- or whose results a return returns). Each case below makes one of their guards fail, so
-- the C helpers (the interpreter's L_TAILCALL and return) take over: a C function or a
-- callable table tail-called, fewer or more arguments than parameters, a vararg callee, an
-- open upvalue of the frame, a callee whose frame needs the stack to grow, a frame entered
-- from C, a caller wanting another number of results, errors and tracebacks through tail
-- calls. Every function runs often enough to be compiled, and the results are compared with
-- lua5.4's.

-- tak: TAILCALL with B = 0 (its last argument is a call returning all its results)
local function tak(x, y, z)
  if y >= x then return z end
  return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
end
print("tak", tak(18, 12, 6), tak(12, 8, 4))

-- ack: TAILCALL with B = 3
local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end
print("ack", ack(2, 300), ack(3, 4))

-- a long chain of tail calls: the stack must not grow
local function count(n, acc) if n == 0 then return acc end return count(n - 1, acc + 1) end
print("count", count(300000, 0))

-- mutual tail recursion between two functions of different frame sizes
local is_odd
local function is_even(n) if n == 0 then return true end return is_odd(n - 1) end
function is_odd(n)
  local a, b, c, d, e, f = 1, 2, 3, 4, 5, 6
  if n == 0 then return false end
  return is_even(n - 1 + (a + b + c + d + e + f) * 0)
end
print("parity", is_even(10001), is_odd(10001), is_even(50000))

-- composition and partial application: B = 0 with one argument, B = 3
local function compose(f, g) return function(x) return f(g(x)) end end
local function partial(f, a) return function(b) return f(a, b) end end
local function add(a, b) return a + b end
local function mul(a, b) return a * b end
local h = compose(partial(mul, 3), partial(add, 7))
local s = 0
for i = 1, 2000 do s = s + h(i) end
print("compose", s)

-- tail calls whose guards fail
local t = setmetatable({}, {__call = function(self, x) return x * 2 end})
local function to_c(x) return math.abs(x) end                   -- a C function
local function to_callable(x) return t(x) end                    -- __call on a table
local function two(a, b) return (a or 0) + (b or 0) end
local function fewer(x) return two(x) end                         -- one argument of two
local function more(x) return two(x, x, x) end                    -- three of two
local function va(...) return select("#", ...) end
local function to_vararg(x) return va(x, x) end                   -- a vararg callee
local function from_multi(...) return two(...) end                -- B = 0 from a vararg frame
local function spread(x) return two(table.unpack({x, x, x}, 1, x % 3 + 1)) end -- B = 0, 1 to 3 arguments
local function spread_va(x) return va(table.unpack({x, x, x}, 1, x % 3 + 1)) end -- B = 0, a vararg callee
local function upval(x)                                           -- an open upvalue of the frame
  local y = x + 1
  local get = function() return y end
  return two(get(), x)
end
local acc = 0
for i = 1, 300 do
  acc = acc + to_c(-i) + to_callable(i) + fewer(i) + more(i) + to_vararg(i) + from_multi(i, i) + spread(i) + spread_va(i) + upval(i)
end
print("guards", acc)

-- a tail call to a function with a large frame, deep in the stack: the stack grows
local function big(x)
  local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 = x, x, x, x, x, x, x, x, x, x
  local b1, b2, b3, b4, b5, b6, b7, b8, b9, b10 = a1, a2, a3, a4, a5, a6, a7, a8, a9, a10
  local c1, c2, c3, c4, c5, c6, c7, c8, c9, c10 = b1, b2, b3, b4, b5, b6, b7, b8, b9, b10
  return a1 + b2 + c3 + c10
end
local function to_big(x) return big(x) end
local function deep(n) if n == 0 then return to_big(1) end return deep(n - 1) + 0 end
local d = 0
for n = 1, 400 do d = d + deep(n) end
print("deep", d)

-- a frame entered from C tail-calls, and returns to C
local function entered(x) return two(x, 1) end
local ok, v = pcall(entered, 41)
print("pcall", ok, v)
for i = 1, 200 do ok, v = pcall(entered, i) end
print("pcall", ok, v)

-- returns to callers wanting all the results, 0 to 3 of them, and other numbers
local function r0() return end
local function r1(x) return x end
local function r2(x) return x, x + 1 end
local function r3(x) return x, x + 1, x + 2 end
local function pack(...) return select("#", ...), ... end
local n0, n1, n2, n3, w = 0, 0, 0, 0, 0
for i = 1, 300 do
  n0 = n0 + pack(r0())
  local c1, v1 = pack(r1(i))
  n1 = n1 + c1 + v1
  local c2, a2, b2 = pack(r2(i))
  n2 = n2 + c2 + a2 + b2
  local c3, a3, b3, e3 = pack(r3(i))
  n3 = n3 + c3 + a3 + b3 + e3
  local x1, x2 = r1(i)                 -- two wanted, one given
  local y1 = r3(i)                     -- one wanted, three given
  local z1, z2, z3, z4 = r2(i)         -- four wanted, two given
  w = w + x1 + (x2 == nil and 1 or 0) + y1 + z1 + z2 + (z3 == nil and 1 or 0) + (z4 == nil and 1 or 0)
end
print("returns", n0, n1, n2, n3, w)
print("table", #{r3(1)}, #{r0()}, #{r1(5)}, select("#", r2(1)))

-- errors raised after tail calls: the message, and the traceback's "(...tail calls...)"
local function fail(x) if x > 0 then error("failed at " .. x) end return x end
local function via(x) return fail(x) end
for i = 1, 200 do pcall(via, -i) end
print(pcall(via, 3))
local function bad(x) return x.field end
local function to_bad(x) return bad(x) end
for i = 1, 200 do pcall(to_bad, {field = i}) end
print(pcall(to_bad, nil))
local function trace(x) return debug.traceback("tb", 1) end
local function to_trace(x) return trace(x) end
print((to_trace(1):gsub("\n[^\n]*%[C%][^\n]*", "")))
local function callnil(x) return x(1) end
print(pcall(callnil, nil))
