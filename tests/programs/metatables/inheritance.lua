-- Classes with inheritance through __index chains, super calls, overrides.
local Animal = {}
Animal.__index = Animal

function Animal.new(name, sound)
  local self = setmetatable({}, Animal)
  self.name = name
  self.sound = sound or "..."
  return self
end
function Animal:speak() return self.name .. " says " .. self.sound end
function Animal:kind() return "animal" end

local Dog = setmetatable({}, {__index = Animal})
Dog.__index = Dog
function Dog.new(name)
  local self = Animal.new(name, "woof")
  return setmetatable(self, Dog)
end
function Dog:kind() return "dog (" .. Animal.kind(self) .. ")" end
function Dog:fetch() return self.name .. " fetches" end

local Puppy = setmetatable({}, {__index = Dog})
Puppy.__index = Puppy
function Puppy.new(name)
  return setmetatable(Dog.new(name), Puppy)
end
function Puppy:speak() return Dog.speak(self) .. " (squeaky)" end

local a, d, p = Animal.new("generic"), Dog.new("rex"), Puppy.new("bit")
for _, x in ipairs({a, d, p}) do
  print(x:speak(), x:kind(), x.fetch and x:fetch() or "no fetch")
end

-- isinstance by walking the chain
local function isinstance(obj, cls)
  local mt = getmetatable(obj)
  while mt do
    if mt == cls then return true end
    local parent = getmetatable(mt)
    mt = parent and parent.__index
  end
  return false
end
print(isinstance(p, Puppy), isinstance(p, Dog), isinstance(p, Animal), isinstance(d, Puppy))

-- a class helper with inherited metamethods (metamethods are not inherited
-- through __index, so the helper copies them)
local function class(parent)
  local c = {}
  c.__index = c
  if parent then
    for k, v in pairs(parent) do
      if k:sub(1, 2) == "__" and k ~= "__index" then c[k] = v end
    end
    setmetatable(c, {__index = parent})
  end
  return c
end
local Base = class()
Base.__tostring = function(s) return "Base(" .. s.v .. ")" end
Base.__add = function(x, y) return x.v + y.v end
local Derived = class(Base)
local d1 = setmetatable({v = 1}, Derived)
local d2 = setmetatable({v = 2}, Derived)
print(tostring(d1), d1 + d2)
-- counting instances through a shared class field
local Counter = class()
Counter.instances = 0
function Counter.new() Counter.instances = Counter.instances + 1; return setmetatable({}, Counter) end
for _ = 1, 5 do Counter.new() end
print(Counter.instances, Counter.new().instances)
