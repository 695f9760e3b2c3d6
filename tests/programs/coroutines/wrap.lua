-- coroutine.wrap: iterators, error propagation, dead wrapped coroutines.
local function range(n, step)
  return coroutine.wrap(function()
    for i = 1, n, step or 1 do coroutine.yield(i) end
  end)
end
local out = {}
for i in range(10, 3) do out[#out + 1] = i end
print(table.concat(out, " "))
-- passing values into a wrapped coroutine
local acc = coroutine.wrap(function(first)
  local total = first
  while true do
    local v = coroutine.yield(total)
    if v == nil then return "final " .. total end
    total = total + v
  end
end)
print(acc(1), acc(2), acc(3), acc())
print(pcall(acc))
-- errors inside a wrapped coroutine propagate to the caller with position
local boom = coroutine.wrap(function() error("inside wrap") end)
print(pcall(boom))
local boom2 = coroutine.wrap(function() error({code = 5}) end)
local ok, e = pcall(boom2)
print(ok, type(e), e.code)
-- tree traversal with recursive yields
local tree = {v = 4, l = {v = 2, l = {v = 1}, r = {v = 3}}, r = {v = 6, l = {v = 5}, r = {v = 7}}}
local function walk(node)
  if node then
    walk(node.l)
    coroutine.yield(node.v)
    walk(node.r)
  end
end
local vals = {}
for v in coroutine.wrap(function() walk(tree) end) do vals[#vals + 1] = v end
print(table.concat(vals, ","))
-- permutations generator (PIL style)
local function permgen(a, n)
  n = n or #a
  if n <= 1 then coroutine.yield(a) else
    for i = 1, n do
      a[n], a[i] = a[i], a[n]
      permgen(a, n - 1)
      a[n], a[i] = a[i], a[n]
    end
  end
end
local count = 0
for p in coroutine.wrap(function() permgen({1, 2, 3, 4}) end) do count = count + 1 end
print("permutations", count)
