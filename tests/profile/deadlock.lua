-- producers block on full rings (slow analyzers) while other threads allocate and collect
local function busy(n)
  local function f(x) return x + 1 end
  local s = 0
  for i = 1, n do s = f(s) end
  return s
end
local function alloc(n)
  local keep = {}
  for i = 1, n do
    keep[i % 100 + 1] = {i, tostring(i)}
    if i % 2000 == 0 then collectgarbage() end
  end
  return #keep
end
local hs = {}
for i = 1, 4 do hs[#hs + 1] = thread.spawn(busy, 200000) end
for i = 1, 4 do hs[#hs + 1] = thread.spawn(alloc, 20000) end
local tot = 0
for _, h in ipairs(hs) do tot = tot + h:join() end
print("done", tot)
