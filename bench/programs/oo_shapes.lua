-- Class hierarchy three levels deep with virtual methods, super calls and
-- polymorphic dispatch over a mixed array: method lookup through __index
-- chains dominates. Optional argument: number of passes.
local function class(parent)
  local c = {}
  c.__index = c
  if parent then setmetatable(c, {__index = parent}) end
  return c
end

local Shape = class()
function Shape.new(cls, x, y) return setmetatable({x = x, y = y}, cls) end
function Shape:move(dx, dy) self.x = self.x + dx; self.y = self.y + dy end
function Shape:area() return 0 end
function Shape:perimeter() return 0 end
function Shape:score() return self:area() * 2 + self:perimeter() end

local Rect = class(Shape)
function Rect.new(x, y, w, h)
  local r = Shape.new(Rect, x, y)
  r.w, r.h = w, h
  return r
end
function Rect:area() return self.w * self.h end
function Rect:perimeter() return 2 * (self.w + self.h) end

local Square = class(Rect)
function Square.new(x, y, s)
  local q = Rect.new(x, y, s, s)
  return setmetatable(q, Square)
end
function Square:score() return Rect.score(self) + 1 end

local Circle = class(Shape)
function Circle.new(x, y, r)
  local c = Shape.new(Circle, x, y)
  c.r = r
  return c
end
function Circle:area() return 3 * self.r * self.r end
function Circle:perimeter() return 6 * self.r end

local Triangle = class(Shape)
function Triangle.new(x, y, a, b, c)
  local t = Shape.new(Triangle, x, y)
  t.a, t.b, t.c = a, b, c
  return t
end
function Triangle:perimeter() return self.a + self.b + self.c end
function Triangle:area() return self.a * self.b / 2 end

local shapes = {}
for i = 1, 1000 do
  local k = i % 4
  if k == 0 then shapes[i] = Rect.new(i, -i, i % 7 + 1, i % 5 + 1)
  elseif k == 1 then shapes[i] = Square.new(i, i, i % 9 + 1)
  elseif k == 2 then shapes[i] = Circle.new(-i, i, i % 6 + 1)
  else shapes[i] = Triangle.new(0, 0, 3, 4, 5 + i % 3) end
end

local passes = tonumber(arg and arg[1]) or 7800
local total, moved = 0, 0
for p = 1, passes do
  for i = 1, #shapes do
    local s = shapes[i]
    total = total + s:score()
    s:move(1, -1)
    moved = moved + s.x - s.y
  end
  total = total % 1000000007
  moved = moved % 1000000007
end
print(string.format("passes %d: score %d, moved %d", passes, total, moved))
