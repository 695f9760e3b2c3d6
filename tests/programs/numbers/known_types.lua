-- Types the JIT knows before an instruction (jit/jit_types.c) and the guarded entries that
-- test them: cases 1 to 4 make a known register change type behind compiled code's back
-- (debug.setlocal from a metamethod that a failed guard's step runs), so guarded entries
-- must fail and step (-Xstats counts them; tests/jit/cli_check.py checks they do), and
-- the results must be the interpreter's and lua5.4's. Cases 5 and 6 are known types
-- through loops, joins and for loops whose state is rewritten.

local Box = {}
Box.__index = Box

-- 1. An __add a failed ADD guard steps into rewrites a local the next instruction knows to
-- be an integer (x: LOADI), so the ADDI after it goes through its guarded entry, which
-- finds a string and steps (string coercion: "10" + 1 is 11).
local function case1()
  local b = setmetatable({}, {__add = function(a, v)
    debug.setlocal(2, 2, "10") -- level 2: case1, which the metamethod interrupted; local 2: x
    return 0
  end})
  local x = 1 -- after the call above, which forgets every type
  local y = b + 1
  local z = x + 1
  return z, y
end
print(pcall(case1))

-- 2. The same with a float known (LOADF) rewritten to an integer: the float guard fails,
-- and the MULK after it computes with an integer.
local function case2()
  local t = setmetatable({}, {__unm = function() debug.setlocal(2, 2, 7) return 0 end})
  local f = 2.5
  local u = -t
  local g = f * 2
  return g, math.type(g), u
end
print(pcall(case2))

-- 3. An __lt whose step jumps (dispatch through JitCode.at) into a pc where a loop counter
-- and an accumulator are known; the metamethod rewrites the accumulator to a float.
local function case3(n)
  local cmp = setmetatable({}, {__lt = function() debug.setlocal(2, 4, 0.5) return true end})
  local other = setmetatable({}, getmetatable(cmp))
  local acc = 0
  for i = 1, n do
    acc = acc + i
    if i == 3 and cmp < other then acc = acc + 1 end
    acc = acc + 1
  end
  return acc, math.type(acc)
end
print(case3(6))

-- 4. A chain of guard failures: two known registers rewritten at once, so the guarded
-- entries of several instructions in a row step before the code goes on typed.
local function case4()
  local m = setmetatable({}, {__len = function()
    debug.setlocal(2, 2, "5")
    debug.setlocal(2, 3, 1.5)
    return 0
  end})
  local a, b = 3, 4
  local l = #m
  local c = a * 2
  local d = b * 2
  local e = c + d
  return c, d, e, l
end
print(case4())

-- 5. Known types flowing through loops and joins: integers and floats mixed on the two
-- sides of a branch (a number, of either kind, after the join), integer and float for
-- loops, and comparisons of known integers and floats against each other.
local function case5(n)
  local s, f = 0, 0.0
  for i = 1, n do
    local v
    if i % 2 == 0 then v = i else v = i + 0.5 end
    s = s + v
    f = f + i / 2
    if i < n and f > 1.0 then s = s - 1 end
    if -i <= -3 then s = s + 2 end
  end
  for x = 1.0, 3.0, 0.5 do f = f - x end
  local k = 7
  for _ = 1, 3 do k = k * 3 % 1000 end
  return s, f, k, math.type(s), math.type(f)
end
print(case5(10))

-- 6. A for loop whose step is rewritten inside the body (the "(for state)" locals are
-- visible to debug.setlocal): the interpreter's loop semantics, exactly.
local function case6()
  local poke = setmetatable({}, {__concat = function(a, b)
    debug.setlocal(2, 5, 2) -- the loop's step (locals 3 to 5 are its state), an integer still
    return "x"
  end})
  local out = {}
  for i = 1, 10 do
    out[#out + 1] = i
    if i == 2 then local _ = poke .. "" end
  end
  return table.concat(out, ",")
end
print(case6())
