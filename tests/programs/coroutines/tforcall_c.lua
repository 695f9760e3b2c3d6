-- The generic for over C functions other than next and ipairs (compiled code calls them
-- through jit_call, as CALL does, with the interpreter's vm_call_value around the call:
-- jit/jit_tpl_call.c, tpl_tforcall). Each guard of that path is taken here: an ordinary
-- C iterator, coroutine.wrap iterators with one to three loop variables, errors out of the
-- iterator (the nested C call count is restored by pcall), the nested C call limit (left to
-- a step), and a debug hook set inside the iterator (the interpreter goes on after the call:
-- before, the stepped loop missed the hook), and a hook set by a metamethod a step ran.

-- an ordinary C iterator
local words = {}
for w in string.gmatch("one two three four", "%a+") do words[#words + 1] = w end
print(table.concat(words, ","))
for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do io.write(k, v, ";") end
print()

-- wrap iterators: one, two and three loop variables; fewer values than variables
local function gen(n, k)
  return coroutine.wrap(function()
    for i = 1, n do
      if k == 1 then coroutine.yield(i) elseif k == 2 then coroutine.yield(i, i * i)
      else coroutine.yield(i, i * 2, i * 3) end
    end
  end)
end
local s = 0
for a in gen(100, 1) do s = s + a end
for a, b in gen(100, 2) do s = s + a + b end
for a, b, c in gen(100, 3) do s = s + a + b + c end
for a, b, c in gen(100, 1) do s = s + a + (b or 0) + (c or 0) end
print("sums", s)

-- a pipeline of wrap iterators, each a for loop over the one below
local function stage(src, f)
  return coroutine.wrap(function() for v in src do coroutine.yield(f(v)) end end)
end
local p = gen(1000, 1)
for d = 1, 10 do p = stage(p, function(v) return v + d end) end
s = 0
for v in p do s = s + v end
print("pipeline", s)

-- errors out of the iterator, caught by pcall, many times: the nested C call count is back
-- each time (the nesting limit below is the same after them)
local function bad(_, i)
  if i >= 3 then error("iterator failed at " .. i) end
  return i + 1
end
local caught = 0
for _ = 1, 500 do
  local ok, msg = pcall(function() for i in bad, nil, 0 do end end)
  if not ok and msg:find("iterator failed at 3", 1, true) then caught = caught + 1 end
end
print("caught", caught)
local wrapbad = coroutine.wrap(function() coroutine.yield(1) error("in wrap") end)
print(pcall(function() local n = 0 for v in wrapbad do n = n + v end return n end))

-- the nested C call limit: generators over generators (two nested C calls a level)
local function chain(n)
  if n == 0 then return coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) end
  local inner = chain(n - 1)
  return coroutine.wrap(function() for v in inner do coroutine.yield(v) end end)
end
local function total(n)
  local ok, v = pcall(function() local t = 0 for x in chain(n) do t = t + x end return t end)
  if ok then return ok, v end
  local msg, n = tostring(v):gsub("tforcall_c%.lua:%d+: ", "")
  return ok, msg, n .. " positions"
end
print("chain", 97, total(97))
print("chain", 98, total(98))

-- pcall as the iterator: each level a for loop whose call runs the next level, in the main
-- thread and in a coroutine (whose C stack has a limit); nCcalls stops both as lua5.4
local function deep(n)
  if n == 0 then return 0 end
  for ok, v in pcall, deep, n - 1 do
    if not ok then error(v, 0) end
    return v + 1
  end
end
print("deep", pcall(deep, 60))
print("deep", pcall(deep, 250))
print("deep co", coroutine.wrap(function() return pcall(deep, 60) end)())
print("deep co", coroutine.wrap(function() return pcall(deep, 250) end)())

-- a debug hook set inside the iterator, on the thread running the loop: the loop goes on
-- in the interpreter, with the hook
local main = coroutine.running()
local lines = 0
local sethook = coroutine.wrap(function()
  debug.sethook(main, function() lines = lines + 1 end, "l")
  coroutine.yield(1)
  coroutine.yield(2)
end)
s = 0
for v in sethook do s = s + v end
debug.sethook(main)
print("hooked", s, lines > 0)

-- a debug hook set by a metamethod a stepped instruction ran (__index): the code after it
-- runs hooked
lines = 0
local function count() lines = lines + 1 end
-- (one line: the hook sees no new line before the metamethod returns)
local proxy = setmetatable({}, {__index = function(_, k) debug.sethook(count, "l") return k end})
local got = proxy.key
local after = got .. "!"
debug.sethook()
print("hooked by a step", after, lines > 0)
