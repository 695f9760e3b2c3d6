-- string.dump produces a binary chunk that load accepts back (mode "b").
local function add100(a) return a + 100 end
local dumped = string.dump(add100)
print(type(dumped), #dumped > 0)
local back, err = load(dumped, "dumped", "b")
print(type(back), err)
print(back(1), back(-100))
-- binary chunks are rejected in text mode and text in binary mode
print(load(dumped, "dumped", "t"))
print(load("return 1", "text", "b"))
-- a dumped function gets fresh upvalues: load sets the first one to the
-- global table whatever its name (usually it is _ENV), the others to nil
local function uses_global() return type(print) end
print(load(string.dump(uses_global))())
local captured = 5
local other = "x"
local function uses_upvalue() return captured, other end
local c, o = load(string.dump(uses_upvalue))()
print(c == _G, o)
-- dumping with strip=true still runs
local stripped = load(string.dump(function(x, y) return x .. y end, true))
print(stripped("a", "b"))
-- a loop, a closure and string constants survive the round trip
local function complex(n)
  local acc = {}
  for i = 1, n do acc[#acc + 1] = ("item%d"):format(i) end
  local join = function(sep) return table.concat(acc, sep) end
  return join(",")
end
print(load(string.dump(complex))(3))
print(pcall(string.dump, print))
