-- Local and global variables: scoping, shadowing, multiple assignment,
-- globals living in _ENV, 190 locals in one function.
g1 = "global one"
local l1 = "local one"
print(g1, l1, _ENV.g1, _ENV.l1)
do
  local g1 = "shadowing local"
  print(g1, _ENV.g1)
  g1 = "changed local"
  print(g1, _ENV.g1)
end
print(g1)
-- a local is visible only after its declaration statement
local x = 10
local x = x + 1   -- the right-hand x is the previous local
print(x)
local function f() return x end
x = 20
print(f())
-- undefined globals read as nil; assigning nil removes them
print(undefined_variable)
g2 = 5
g2 = nil
print(rawget(_ENV, "g2"))
-- multiple assignment: all expressions are evaluated before assigning
local a, b, c = 1, 2, 3
a, b, c = c, a, b
print(a, b, c)
local t = {1, 2, 3}
local i = 1
i, t[i] = i + 1, "set"
print(i, t[1], t[2])
-- globals created inside functions
local function make_global() created_in_function = "yes" end
make_global()
print(created_in_function)
-- many locals in one function (close to the 200 limit)
local src = {"local v1 = 1"}
for k = 2, 190 do src[#src + 1] = ("local v%d = v%d + 1"):format(k, k - 1) end
src[#src + 1] = "return v190"
print(load(table.concat(src, "\n"))())
-- the same name as local and upvalue at different levels
local name = "outer"
local function level1()
  local name = "level1"
  return function() return name end
end
print(level1()(), name)
