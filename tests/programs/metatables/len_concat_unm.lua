-- __len, __concat and __unm.
local List = {}
List.__index = List
List.__len = function(l) return l.n end
List.__concat = function(a, b)
  local out = setmetatable({n = 0}, List)
  local function add(x)
    if getmetatable(x) == List then
      for i = 1, x.n do out.n = out.n + 1; out[out.n] = x[i] end
    else
      out.n = out.n + 1; out[out.n] = x
    end
  end
  add(a); add(b)
  return out
end
List.__unm = function(l)
  local out = setmetatable({n = l.n}, List)
  for i = 1, l.n do out[i] = l[l.n - i + 1] end
  return out
end
local function list(...) return setmetatable({n = select("#", ...), ...}, List) end
local function show(l)
  local parts = {}
  for i = 1, l.n do parts[i] = tostring(l[i]) end
  return "[" .. table.concat(parts, ",") .. "]"
end
local a, b = list(1, 2), list(3)
print(#a, #b, #list())
print(show(a .. b), show(a .. 9), show(0 .. a))
print(show(-(a .. b)))
-- concatenation chains are right associative: "x" .. a .. b calls a..b first
print(show("x" .. a .. b))
-- __concat with strings and numbers on either side
local C = setmetatable({}, {__concat = function(x, y)
  local function s(v) return type(v) == "table" and "C" or tostring(v) end
  return s(x) .. "+" .. s(y)
end})
print(C .. "s", "s" .. C, 1 .. C, C .. 2.5)
print("a" .. "b" .. C .. "d")
-- __len result is returned as is (may be any value)
local weird = setmetatable({}, {__len = function() return "long" end})
print(#weird)
-- __unm on a table without it is an error
print(pcall(function() return -{} end))
print(pcall(function() return #5 end))
