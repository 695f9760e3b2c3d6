-- Regression: coroutines nested in coroutines stopped with "C stack overflow" at about 100
-- levels, where lua5.4 allows 196 (LUAI_MAXCCALLS 200: a resume counts one nested C call,
-- and Tandem counted two). The limit is also where lua5.4 puts it under pcall and in
-- coroutines resumed again and again (generators wrapping generators).
local function nest(n)
  if n == 0 then return 0 end
  local co = coroutine.create(function() return nest(n - 1) end)
  local ok, v = coroutine.resume(co)
  if not ok then error(v, 0) end
  return v + 1
end
-- (each level is a coroutine with a C stack of its own: a few of them, not hundreds)
for _, n in ipairs{10, 196, 197} do print("nest", n, pcall(nest, n)) end

-- An error crossing N coroutine.wrap levels gets N positions in front: print the message
-- and how many.
local function show(ok, msg)
  if ok then return ok, msg end
  local n
  msg, n = msg:gsub("nesting_limit%.lua:%d+: ", "")
  return ok, msg, n .. " positions"
end
-- through coroutine.wrap, without pcall at the top
local function wrapnest(n)
  if n == 0 then return "bottom" end
  return coroutine.wrap(function() return wrapnest(n - 1) end)()
end
print("wrap", wrapnest(196))
print("wrap", show(pcall(wrapnest, 197)))
-- generators: each level resumed many times (a level is a for loop calling the wrapped
-- function of the level below, which resumes it: two nested C calls)
local function chain(n)
  if n == 0 then return coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) end
  local inner = chain(n - 1)
  return coroutine.wrap(function() for v in inner do coroutine.yield(v) end end)
end
for _, n in ipairs{97, 98} do
  print("chain", n, show(pcall(function() local s = 0 for v in chain(n) do s = s + v end return s end)))
end
-- nested pcalls inside a coroutine share the count with the coroutines around them
local function deep(n) if n == 0 then return "deep" end return select(2, pcall(deep, n - 1)) end
for _, levels in ipairs{100, 195} do
  local co = coroutine.wrap(function() return deep(levels) end)
  print("pcalls in coroutine", levels, co())
end
