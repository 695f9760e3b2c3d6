-- Miscellaneous base functions: _G, _VERSION, getmetatable, select, next.
print(_VERSION)
print(_G._G == _G, _G.print == print, type(_G))
x_global = 10
print(_G.x_global, rawget(_G, "x_global"))
_G.y_global = 20
print(y_global)
-- globals are fields of _ENV
local function env_test()
  local _ENV = {print = print}
  z = 5
  print(z, _ENV.z)
end
env_test()
print(z)
-- _ENV can be replaced for a block
do
  local _ENV = setmetatable({}, {__index = _G})
  newglobal = "in custom env"
  print(newglobal, _G.newglobal)
end
-- the set of standard library tables
local libs = {}
for _, name in ipairs({"string", "table", "math", "io", "os", "coroutine", "debug", "package"}) do
  libs[#libs + 1] = name .. "=" .. type(_G[name])
end
print(table.concat(libs, " "))
-- global functions of the base library
local funcs = {"assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs", "load",
  "loadfile", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset",
  "require", "select", "setmetatable", "tonumber", "tostring", "type", "xpcall"}
local missing = {}
for _, f in ipairs(funcs) do if type(_G[f]) ~= "function" then missing[#missing + 1] = f end end
print("missing base functions:", #missing, table.concat(missing, ","))
print(getmetatable({}), getmetatable(1), getmetatable(print))
-- print with no arguments and with embedded tabs
print()
print(nil)
print("a\tb", "c")
