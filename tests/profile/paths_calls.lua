-- Path profiling across calls: recursion, errors caught by pcall (frames left by an error
-- end no path), tail calls, coroutines, metamethods, generic for.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function risky(i)
  local acc = 0
  for k = 1, 5 do
    acc = acc + k
    if k == i then error("boom " .. i) end
  end
  return acc
end

local function count_down(n, acc)
  if n == 0 then return acc end
  return count_down(n - 1, acc + n) -- tail call
end

local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do
      if i % 2 == 0 then coroutine.yield(i) else coroutine.yield(-i) end
    end
  end)
end

local V = setmetatable({}, {__index = function(t, k)
  if type(k) == "number" and k > 5 then return k * 2 end
  return 0
end})

local ok, bad = 0, 0
for i = 1, 8 do
  if pcall(risky, i) then ok = ok + 1 else bad = bad + 1 end
end
local s = 0
for v in gen(9) do s = s + v end
local m = 0
for i = 1, 10 do m = m + V[i] end
local words = {}
for w in ("a bb ccc dd e"):gmatch("%a+") do
  if #w > 1 then words[#words + 1] = w end
end
local keys = 0
for k, v in pairs({x = 1, y = 2, z = 3}) do
  if v > 1 then keys = keys + 1 end
end
print(fib(15), ok, bad, count_down(100, 0), s, m, #words, keys)
