-- load with an explicit environment, reader functions, upvalues.
local env = {x = 5, print = print}
local f = load("y = x * 2 return y", "chunk", "t", env)
print(f(), env.y, y)
-- a sandbox: only whitelisted functions are visible
local sandbox = setmetatable({}, {__index = {math = math, tostring = tostring}})
local g = load("return tostring(math.sqrt(16)) .. (print and 'has print' or ' no print')", "sandbox", "t", sandbox)
print(g())
-- assignments in the chunk go to the env table
local h = load("a = 1; b = 2; c = a + b", "=env", "t", env)
h()
print(env.a, env.b, env.c, a)
-- nil env: globals are not accessible at all
local n = load("return x", "=nilenv", "t", nil)
print(pcall(n))
-- a reader function supplying pieces
local pieces = {"return ", "'from ", "reader'", nil}
local i = 0
local r = load(function() i = i + 1; return pieces[i] end)
print(r())
-- reader returning empty string ends the chunk
local j = 0
local r2 = load(function() j = j + 1; if j == 1 then return "return 42" end return "" end)
print(r2())
-- reader returning a non-string is an error
print(pcall(load, function() return {} end))
-- _ENV as the first upvalue can be replaced via load's env parameter each time
local src = "return who"
for _, name in ipairs({"ann", "bob"}) do
  print(load(src, "=who", "t", {who = name})())
end
-- the environment of a loaded function is shared with functions it defines
local e2 = {}
load("function get() return secret end secret = 's3'", "=def", "t", e2)()
print(e2.get(), e2.secret)
