-- Deep (non-tail) recursion and unbounded tail calls.
local function depth(n)
  if n == 0 then return 0 end
  return 1 + depth(n - 1)
end
print("depth 10000", depth(10000))

local function sum(n, acc)
  if n == 0 then return acc end
  return sum(n - 1, acc + n)
end
print("tail 1e6", sum(1000000, 0))

-- mutual tail recursion
local ping, pong
function ping(n) if n == 0 then return "ping" end return pong(n - 1) end
function pong(n) if n == 0 then return "pong" end return ping(n - 1) end
print(ping(1000001))

-- tail call through a method and through a vararg function
local obj = {}
function obj:loop(n) if n == 0 then return "done" end return self:loop(n - 1) end
print(obj:loop(500000))
local function va(n, ...) if n == 0 then return select("#", ...) end return va(n - 1, ...) end
print(va(300000, 1, 2, 3))

-- deep recursion through pcall
local function pdepth(n)
  if n == 0 then return 0 end
  local ok, v = pcall(pdepth, n - 1)
  return v + 1
end
print("pcall depth", pdepth(150))
