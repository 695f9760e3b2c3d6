-- Several closures sharing one upvalue see each other's writes, both while
-- the variable is still on the stack (open) and after it is closed.
local function make()
  local value = 0
  local function get() return value end
  local function set(v) value = v end
  local function inc() value = value + 1 end
  set(10)
  inc()
  local during = get()
  return get, set, inc, during
end
local get, set, inc, during = make()
print("during", during)
inc(); inc()
print("after", get())
set(-5)
print("set", get())

-- closures and the enclosing function share an open upvalue
local function open_share()
  local x = 1
  local f = function() x = x * 2 end
  f(); f()
  local before = x
  x = x + 1
  f()
  return before, x
end
print(open_share())

-- two generations of the same function have independent upvalues
local g1 = {make()}
local g2 = {make()}
g1[3]()
print(g1[1](), g2[1]())

-- a closure capturing a loop variable and an outer variable at the same time
local total = 0
local fns = {}
for i = 1, 3 do
  fns[i] = function(k) total = total + i * k; return total end
end
print(fns[1](1), fns[2](1), fns[3](10))

-- upvalue captured by a closure inside a coroutine
local shared = 0
local co = coroutine.wrap(function()
  for _ = 1, 3 do shared = shared + 1; coroutine.yield(shared) end
end)
print(co(), co(), shared)
shared = 100
print(co(), shared)

-- recursive local function references itself as an upvalue
local function countdown(n) if n == 0 then return "liftoff" end return countdown(n - 1) end
local alias = countdown
countdown = nil
print(pcall(alias, 3))
