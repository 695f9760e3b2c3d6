-- Coroutine pipelines: a generator, filters and a consumer connected with
-- resume/yield, plus coroutine.wrap iterators over a recursive structure.
-- Context switches between coroutines dominate. Optional argument: rounds.
local function generator(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
end
local function filter(source, pred)
  return coroutine.wrap(function()
    for v in source do if pred(v) then coroutine.yield(v) end end
  end)
end
local function map(source, f)
  return coroutine.wrap(function()
    for v in source do coroutine.yield(f(v)) end
  end)
end
local function tree(depth, base)
  if depth == 0 then return {value = base} end
  return {left = tree(depth - 1, base * 2), right = tree(depth - 1, base * 2 + 1), value = base}
end
local function walk(node)
  if node.left then walk(node.left) end
  coroutine.yield(node.value)
  if node.right then walk(node.right) end
end

local rounds = tonumber(arg and arg[1]) or 90
local t = tree(12, 1)
local checksum = 0
for round = 1, rounds do
  local src = map(filter(generator(60000), function(x) return x % 3 ~= 0 end),
                  function(x) return x * 2 + round end)
  local s = 0
  for v in src do s = s + v end
  local w = 0
  for v in coroutine.wrap(function() walk(t) end) do w = w + v end
  checksum = (checksum + s + w) % 1000000007
end
print(string.format("rounds %d: checksum %d", rounds, checksum))
