-- __call makes tables callable; extra arguments and results pass through.
local Callable = setmetatable({count = 0}, {
  __call = function(self, a, b)
    self.count = self.count + 1
    return a + b, self.count
  end,
})
print(Callable(1, 2))
print(Callable(10, 20))
print(pcall(Callable, 1, 2))

-- a class whose table is callable as a constructor
local Point = {}
Point.__index = Point
setmetatable(Point, {__call = function(cls, x, y) return setmetatable({x = x, y = y}, cls) end})
function Point:len2() return self.x * self.x + self.y * self.y end
local p = Point(3, 4)
print(p:len2(), getmetatable(p) == Point)

-- __call with varargs and multiple results
local multi = setmetatable({}, {__call = function(self, ...) return select("#", ...), ... end})
print(multi())
print(multi(nil, nil))
print(multi("a", "b", "c"))

-- callable objects in table.sort, string.gsub and pcall/xpcall
local cmp = setmetatable({}, {__call = function(_, x, y) return x > y end})
local t = {3, 1, 2}
table.sort(t, function(x, y) return cmp(x, y) end)
print(table.concat(t, " "))
print(("abc"):gsub("%w", setmetatable({}, {__index = function(_, c) return c:upper() end})))

-- calling a table without __call
print(pcall(function() local x = {}; x() end))
-- a __call chain: the metamethod itself is a callable table
local inner = setmetatable({}, {__call = function(_, ...) return "inner got " .. select("#", ...) .. " args" end})
local outer = setmetatable({}, {__call = inner})
print(pcall(outer, 42))
