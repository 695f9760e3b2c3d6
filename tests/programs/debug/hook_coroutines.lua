-- Hooks belong to a coroutine, as in lua5.4: set on the running one or on another
-- (debug.sethook(co, ...)), inherited by coroutines created later as a mask without a
-- function (gethook there gives nil, the mask, the count), never run inside a hook, and a
-- hook may not yield.
local log = {}
local function hook(e, l)
  log[#log + 1] = e .. (l and (":" .. l) or "")
end
local function flush(title)
  print(title, table.concat(log, " "))
  log = {}
end

local co = coroutine.create(function(a)
  local x = a + 1
  local y = coroutine.yield(x)
  return x + y
end)
debug.sethook(co, hook, "l")
print(debug.gethook(co) == hook, debug.gethook())
print(coroutine.resume(co, 1))
local main_line = 1
print(coroutine.resume(co, 10))
flush("hooked coroutine")

-- the main thread's hook does not run in a coroutine
debug.sethook(hook, "l")
local gen = coroutine.wrap(function()
  local q = 1
  coroutine.yield(q)
  return 2
end)
gen()
debug.sethook()
flush("main hooked")

-- created while a hook is set: the mask and count, not the function
debug.sethook(hook, "cr", 5)
local child = coroutine.create(function()
  local a, b, c = debug.gethook()
  return a, b, c
end)
debug.sethook()
print(coroutine.resume(child))
flush("inherited")

-- a hook set on a suspended coroutine starts where it resumes
local worker = coroutine.create(function()
  for i = 1, 3 do
    coroutine.yield(i)
  end
end)
coroutine.resume(worker)
debug.sethook(worker, hook, "crl")
coroutine.resume(worker)
debug.sethook(worker)
coroutine.resume(worker)
flush("set while suspended")

-- a count hook in a coroutine
local n = 0
local counted = coroutine.create(function()
  local s = 0
  for i = 1, 20 do s = s + i end
  return s
end)
debug.sethook(counted, function() n = n + 1 end, "", 2)
print(coroutine.resume(counted), n)

-- yielding inside a hook is refused
local yielder = coroutine.create(function()
  debug.sethook(function() coroutine.yield() end, "l")
  local a = 1
  return a
end)
print(coroutine.resume(yielder))
