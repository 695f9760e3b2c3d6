-- A small tour: closures, tables with metatables, string formatting, coroutines.
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point.__add(a, b) return Point.new(a.x + b.x, a.y + b.y) end
function Point:__tostring() return ("(%g, %g)"):format(self.x, self.y) end

local sum = Point.new(0, 0)
for i = 1, 10 do sum = sum + Point.new(i, i * 0.5) end
print("sum of points:", tostring(sum))

local function fib_gen(n)
  return coroutine.wrap(function()
    local a, b = 0, 1
    for _ = 1, n do coroutine.yield(a); a, b = b, a + b end
  end)
end
local fibs = {}
for f in fib_gen(15) do fibs[#fibs + 1] = f end
print("fibonacci:", table.concat(fibs, " "))
print(("hello from %s, integer %d, float %.3f"):format(_VERSION, 2^10 // 1, math.pi))
