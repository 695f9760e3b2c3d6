-- GETFIELD and SELF through __index chains: the inline chain walk (vm_index_str_inline, up to
-- four tables deep; the JIT's templates call it) and every way it hands over to the general
-- path: a chain deeper than four, an __index function at any level, a non-table __index, a
-- key absent everywhere, a table without a metatable, a self that is not a table, and
-- classes changed while a loop runs (a method added or removed at a level mid-loop, an
-- __index replaced). Each loop runs long enough for its function to be compiled.
local function class(parent)   -- a class table: its own __index, its parent's as its metatable's
  local cls = setmetatable({}, parent and {__index = parent} or nil)
  cls.__index = cls
  return cls
end

local A = class()
function A:who() return "A" end
function A:depth() return 1 end
A.field = "a-field"
local B = class(A); function B:depth() return 2 end
local C = class(B); function C:depth() return 3 end
local D = class(C)
local E = class(D)
local F = class(E)          -- F -> E -> D -> C -> B -> A: who() is six tables up

local function run(obj, n)
  local s, w = 0, nil
  for _ = 1, n do
    s = s + obj:depth()
    w = obj:who()
  end
  return s, w, obj.field, obj.missing
end

for _, cls in ipairs({A, B, C, D, E, F}) do
  print(run(setmetatable({}, cls), 200))
end

-- an __index function at the top, and one in the middle of a chain
local G = {__index = function(t, k) return function() return "fn:" .. k end end}
local H = class(setmetatable({}, G))   -- H -> (a table whose __index is a function)
print(pcall(run, setmetatable({}, G), 100))
print(pcall(run, setmetatable({}, H), 100))
local viafn = setmetatable({}, {__index = function(t, k) return k == "depth" and function() return 7 end or function() return "f" end end})
local s, w, f, m = run(viafn, 100)
print(s, w, type(f), type(m))

-- a non-table, non-function __index: indexing it again (a string's methods)
local S = setmetatable({}, {__index = "abc"})
print(pcall(function() return type(S.len) end))
print(S.upper == string.upper, S.len ~= nil)

-- a self that is not a table: strings (string metatable), numbers (error with a message)
local function strself(x, n)
  local r
  for _ = 1, n do r = x:upper() .. x:len() end
  return r
end
print(strself("abc", 100))
print(pcall(strself, 42, 100))
print(pcall(function() local t = nil; return t:m() end))

-- no metatable: absent key is nil, a method call errors with the field's name
local plain = {m = function(self) return "plain" end}
local function plainloop(t, n) local r; for _ = 1, n do r = t:m() end; return r, t.absent end
print(plainloop(plain, 100))
print(pcall(function() local t = {}; return t:nomethod() end))

-- classes changed while a loop runs
local obj = setmetatable({}, C)
local out = {}
for i = 1, 300 do
  if i == 100 then function B:who() return "B" end end     -- shadows A's, two levels up
  if i == 200 then B.who = nil end                          -- gone again: A's
  if i == 250 then getmetatable(C).__index = A end          -- C's parent replaced
  out[#out + 1] = obj:who() .. obj:depth()
end
print(out[1], out[99], out[100], out[199], out[200], out[250], out[300])
-- the object itself gets the method: found before the chain
obj.who = function() return "own" end
print(run(obj, 50))
obj.who = nil
-- __index replaced by a function mid-loop, then by a table again
local K = class(A)
local kobj = setmetatable({}, K)
local seen = {}
for i = 1, 300 do
  if i == 100 then getmetatable(K).__index = function(t, k) return function() return "dyn" end end end
  if i == 200 then getmetatable(K).__index = B end
  seen[#seen + 1] = kobj:who()
end
print(seen[99], seen[100], seen[199], seen[200], seen[300])
-- a metatable whose __index is absent first, added mid-loop (the absence bit is cleared)
local mt = {}
local late = setmetatable({}, mt)
local got = {}
for i = 1, 200 do
  if i == 100 then mt.__index = A end
  got[#got + 1] = tostring(late.field)
end
print(got[99], got[100], got[200])

-- s:method() through the string metatable: the library table, a missing method (an error
-- naming it), the library table extended, and __index replaced by a function mid-loop
local function smeth(s, n)
  local r
  for _ = 1, n do r = s:rep(2) .. s:sub(1, 1) end
  return r
end
print(smeth("ab", 100), pcall(function() return ("x"):nosuch() end))
function string.twice(s) return s .. s end
local smt = getmetatable("")
local saved = smt.__index
local tw = {}
for i = 1, 150 do
  if i == 100 then smt.__index = function(s, k) return function() return "via fn:" .. k end end end
  tw[#tw + 1] = ("q"):twice()
end
smt.__index = saved
print(tw[99], tw[100], tw[150], ("z"):twice())
