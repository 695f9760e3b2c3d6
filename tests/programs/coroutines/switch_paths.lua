-- Calls of coroutine.resume, coroutine.yield and coroutine.wrap functions from Lua code go
-- through one C frame (vm_coro_precall, vm/vm_coro.c) instead of the library functions:
-- each of its paths is taken here, from the interpreter and from compiled code alike.

-- results adjusted to what the call wants: none, fewer, more (nil padding), all (a call
-- as the last argument of another), after resume's true
local co = coroutine.create(function(...)
  local a, b = coroutine.yield(...)
  local c = coroutine.yield(a, b, a + b)
  coroutine.yield()
  return c, "end"
end)
print(coroutine.resume(co, 1, 2, 3))
local ok, x = coroutine.resume(co, 10, 20)
print(ok, x)
local ok2, p, q, r, s, t = coroutine.resume(co, 7)
print(ok2, p, q, r, s, t)
print(select("#", coroutine.resume(co)))
coroutine.resume(co) -- no results wanted: the coroutine returns
print(coroutine.status(co))

-- yield receiving fewer and more values than it is assigned to
local got = {}
local gen = coroutine.wrap(function()
  local a, b, c = coroutine.yield(1)
  got[#got + 1] = tostring(a) .. tostring(b) .. tostring(c)
  local d = coroutine.yield(2)
  got[#got + 1] = tostring(d)
  coroutine.yield(select("#", coroutine.yield(3)))
  return "done"
end)
print(gen())
print(gen("x"))
print(gen("y", "z", "w"))
print(gen())
print(gen(1, 2, 3, 4))
print(pcall(gen))
print(table.concat(got, "|"))

-- many values each way: the stacks grow during the switch
local big = {}
for i = 1, 300 do big[i] = i end
local echo = coroutine.wrap(function(...)
  local args = table.pack(...)
  while true do args = table.pack(coroutine.yield(table.unpack(args, 1, args.n))) end
end)
local r1 = table.pack(echo(table.unpack(big)))
local r2 = table.pack(echo(table.unpack(big, 1, 250)))
print(r1.n, r1[1], r1[300], r2.n, r2[250])

-- resume's errors: no argument, not a coroutine, dead, running, normal
print(pcall(coroutine.resume))
print(pcall(coroutine.resume, 42))
print(pcall(coroutine.resume, {}))
print(pcall(function() return coroutine.resume() end))
print(pcall(function() local r = coroutine.resume(nil, 1) return r end))
local dead = coroutine.create(function() return 1 end)
print(coroutine.resume(dead))
print(coroutine.resume(dead))
local selfres
selfres = coroutine.create(function() return coroutine.resume(selfres) end)
print(coroutine.resume(selfres))
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function() return coroutine.resume(outer) end)
  return coroutine.resume(inner)
end)
print(coroutine.resume(outer))

-- a coroutine that fails: resume gives false and the error, wrap raises it with the
-- caller's position (strings only), and a dead wrap says so
local failing = coroutine.create(function(v) coroutine.yield(v) error("failed " .. v) end)
print(coroutine.resume(failing, "once"))
print(coroutine.resume(failing))
print(coroutine.resume(failing))
local wfail = coroutine.wrap(function() coroutine.yield(1) error("wrap failed") end)
print(wfail())
print(pcall(wfail))
print(pcall(wfail))
local wtab = coroutine.wrap(function() error({tag = "t"}) end)
local okt, et = pcall(wtab)
print(okt, type(et), et.tag)
local wnum = coroutine.wrap(function() error(17) end)
print(pcall(wnum))
local function callwrap() return wfail() end
print(pcall(callwrap))

-- yield outside a coroutine, and across a C call boundary
print(pcall(coroutine.yield, 1))
print(select(2, pcall(function() coroutine.yield(1) end)))
local across = coroutine.create(function()
  return table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end)
end)
print(coroutine.resume(across))

-- yield through pcall inside the coroutine, and an error after the resume
local throughp = coroutine.wrap(function()
  local okp, v = pcall(function() local got = coroutine.yield("in pcall") error("after " .. got) end)
  coroutine.yield(okp, v)
  return "out"
end)
print(throughp())
print(throughp("resumed"))
print(throughp())

-- resume, yield and wrap functions called through locals, upvalues, fields, as methods
-- of a table, and from a metamethod
local cor = coroutine
local res, yld = coroutine.resume, coroutine.yield
local obj = {step = coroutine.wrap(function(self) while true do self = yld(self and "m") end end)}
print(obj:step(), obj.step(nil), obj:step())
local mt = {__index = function(t, k) return coroutine.yield(k) end}
local viaidx = coroutine.create(function() local t = setmetatable({}, mt) return t.key .. "!" end)
print(res(viaidx))
print(cor.resume(viaidx, "value"))

-- a debug hook set on a coroutine while it is suspended in yield: its yield returns
-- into the hooked interpreter (the return event of yield is seen)
local events = {}
local hooked = coroutine.create(function()
  for i = 1, 3 do coroutine.yield(i) end
  return "hooked end"
end)
print(coroutine.resume(hooked))
debug.sethook(hooked, function(ev)
  local info = debug.getinfo(2, "n")
  if info and info.name == "yield" then events[#events + 1] = ev end
end, "cr")
print(coroutine.resume(hooked))
print(coroutine.resume(hooked))
print(coroutine.resume(hooked))
print(table.concat(events, ","))

-- resume and yield called with a call hook on the caller itself (the hook runs around them)
local hookcalls = 0
local withhook = coroutine.create(function()
  debug.sethook(function() hookcalls = hookcalls + 1 end, "c")
  local v = coroutine.yield(1)
  debug.sethook()
  return v
end)
print(coroutine.resume(withhook))
print(coroutine.resume(withhook, "back"))
print(hookcalls > 0)
debug.sethook(function() hookcalls = hookcalls + 1 end, "c")
local plain = coroutine.wrap(function(a) return a * 2 end)
local hv = plain(21)
debug.sethook()
print(hv)

-- coroutine.running, isyieldable and status seen from inside through the fast path
local info = coroutine.wrap(function()
  local me, ismain = coroutine.running()
  coroutine.yield(coroutine.status(me), ismain, coroutine.isyieldable())
  coroutine.yield(coroutine.status(me))
end)
print(info())
print(info())
print(coroutine.isyieldable(), select(2, coroutine.running()))

-- deep recursion yielding from every level, consumed by a generic for
local function deep(n)
  if n == 0 then return end
  coroutine.yield(n)
  deep(n - 1)
  coroutine.yield(-n)
end
local sum, cnt = 0, 0
for v in coroutine.wrap(function() deep(150) end) do sum = sum + v cnt = cnt + 1 end
print(sum, cnt)

-- a traceback of a coroutine suspended in yield names yield
local tb = coroutine.create(function() local function inner() coroutine.yield() end inner() end)
coroutine.resume(tb)
print((debug.traceback(tb):gsub("\n%s*%[C%]: in %?", "")))
