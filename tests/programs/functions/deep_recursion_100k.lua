-- Non-tail recursion to depth 100000 (lua5.4 allows about 200000 Lua frames;
-- Lua-to-Lua calls must not consume the C stack).
local function depth(n)
  if n == 0 then return 0 end
  return 1 + depth(n - 1)
end
print("depth 100000", depth(100000))

-- recursion that keeps several live locals per frame
local function build(n)
  if n == 0 then return 0, 0 end
  local a, b = build(n - 1)
  local c = a + n
  return c, b + 1
end
print(build(100000))

-- deep recursion through a method with varargs
local obj = {}
function obj:down(n, ...)
  if n == 0 then return select("#", ...) end
  local r = self:down(n - 1, ...)
  return r
end
print(obj:down(50000, "a", "b"))
