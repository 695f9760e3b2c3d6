-- debug.setmetatable on every type, getregistry, getuservalue/setuservalue, upvalueid and
-- upvaluejoin, setcstacklimit: as lua5.4 answers them.
local mt = {__index = function(v, k) return tostring(v) .. "." .. k end,
            __add = function(a, b) return "added" end,
            __call = function(self, x) return "called " .. tostring(self) .. " " .. tostring(x) end,
            __len = function() return 42 end,
            __concat = function(a, b) return "cat" end,
            __unm = function() return "neg" end}
print(debug.setmetatable(10, mt))
print((5).foo, (2.5).bar, #3, -(7 // 1 | 0) == -7)
print(getmetatable(1) == mt, getmetatable(1.5) == mt, getmetatable("x") == mt)
print(pcall(function() return (1)(2) end))
debug.setmetatable(1, nil)
print(getmetatable(1), pcall(function() return (1).x end))

print(debug.setmetatable(true, mt) == true, (false).x, true .. "s", getmetatable(false) == mt)
debug.setmetatable(true, nil)
print(debug.setmetatable(nil, mt) == nil, (nil).field, getmetatable(nil) == mt)
debug.setmetatable(nil, nil)
print(pcall(function() return (nil).field end))

local f = function() end
debug.setmetatable(f, {__index = {name = "fn"}, __concat = function() return "fcat" end})
print(f.name, print.name, f .. 1, getmetatable(print) == getmetatable(f))
debug.setmetatable(f, nil)

local co = coroutine.create(function() end)
debug.setmetatable(co, {__index = {kind = "co"}})
print(co.kind, coroutine.running().kind)
debug.setmetatable(co, nil)

local smt = getmetatable("")
debug.setmetatable("", {__index = {up = function() return "UP" end}})
print(("x"):up())
debug.setmetatable("", smt)
print(("abc"):upper())

print(pcall(debug.setmetatable, 1, 2))
print(type(debug.getregistry()), debug.getregistry() == debug.getregistry())

print(debug.getuservalue(1), debug.getuservalue({}), debug.getuservalue(nil, 2))
print(io.stdout ~= nil and select("#", debug.getuservalue(io.stdout)))
print(debug.getuservalue(io.stdout, 2))
print(debug.setuservalue(io.stdout, 1, 5))
print(pcall(debug.setuservalue, {}, 1))

local a, b = 1, 2
local function fa() return a end
local function fb() return b end
local function fa2() return a end
print(debug.upvalueid(fa, 1) == debug.upvalueid(fa2, 1), debug.upvalueid(fa, 1) == debug.upvalueid(fb, 1))
print(type(debug.upvalueid(fa, 1)), debug.upvalueid(fa, 2), pcall(debug.upvalueid, fa, "x"))
debug.upvaluejoin(fa, 1, fb, 1)
print(fa(), fb(), fa2())
b = 20
print(fa(), debug.upvalueid(fa, 1) == debug.upvalueid(fb, 1))
print(pcall(debug.upvaluejoin, fa, 2, fb, 1))
print(pcall(debug.upvaluejoin, fa, 1, print, 1))
local function g() return fa end
print(pcall(debug.upvaluejoin, print, 1, fa, 1), pcall(debug.upvaluejoin, fa, 1, string.gmatch("x", "x"), 1))
print(debug.setcstacklimit(1000))
