-- Binary trees: allocate and walk many short-lived complete trees of small
-- tables, with one long-lived tree. Allocation and collection throughput.
-- Optional argument: maximum depth.
local function bottom_up(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return {bottom_up(depth), bottom_up(depth)}
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local N = tonumber(arg and arg[1]) or 15
local mindepth = 4
local maxdepth = math.max(mindepth + 2, N)

local stretch = maxdepth + 1
print(string.format("stretch tree of depth %d\t check: %d", stretch, check(bottom_up(stretch))))

local long_lived = bottom_up(maxdepth)
for depth = mindepth, maxdepth, 2 do
  local iterations = 2 ^ (maxdepth - depth + mindepth)
  local c = 0
  for _ = 1, iterations do c = c + check(bottom_up(depth)) end
  print(string.format("%d\t trees of depth %d\t check: %d", iterations, depth, c))
end
print(string.format("long lived tree of depth %d\t check: %d", maxdepth, check(long_lived)))
