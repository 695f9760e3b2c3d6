-- The C API through tests/capi/capitest.c, compared with lua5.4 loading the same module.
local ct = require "capitest"
print("loaded", ct.modname, ct.metatable_again, ct.placeholder)
print("stack", ct.stack())
print("types", ct.types(nil, true, false, 12, 2.5, 3.0, "10", "0x1p4", "z", {1, 2, 3}, print, ct.stack))
print("push", ct.push())
local proxy = setmetatable({}, {
  __index = function(_, k) return "idx:" .. k end,
  __newindex = function(t, k, v) rawset(t, k, v .. "!") end,
  __len = function() return 77 end,
})
print("tables", ct.tables(proxy))
print("proxy", rawget(proxy, "newkey"), capitest_global)

local c = ct.newcounter("first")
c:inc():inc(5)
print("counter", c:get())
print("tostring", tostring(c))
print("uv", c:uv(1), c:uv(1, {}), c:uv(2, "two"), c:uv(2), c:uv(3), c:uv(3, 1))
print("udata", ct.udata(c))
print("udata not", ct.udata({}))

local f = ct.closure(10)
print("closure", f())
print("closure", f())
print("closure upvalue", select(2, ct.closure()))

local function callee(a, b)
  if type(a) == "string" then error(a .. "!") end
  return a + b, "second"
end
print("calls", ct.calls(callee))

for _, how in ipairs{"luaL_error", "argerror", "typeerror", "checkint", "checknum", "checkstr",
                     "checkudata", "option", "any", "where", "none"} do
  print("error", how, pcall(ct.error, how, 2.5))
end
print("option ok", ct.error("option", "one"), ct.error("option"))
local ok, e = pcall(ct.error, "table")
print("error table", ok, type(e), e.code)
print("error int ok", pcall(ct.error, "checkint", 3.0))
print("error where", (function() return ct.error("where") end)())
print("traceback", (ct.error("traceback"):gsub("0x%x+", "ADDR")))

print("registry", ct.registry(c))
print("registry2", ct.registry({}))
print("buffer", ct.buffer(10))
print("buffer", ct.buffer(5000))
print("load", ct.load())

local co_body = function(x)
  local y = coroutine.yield(x + 1)
  local z = coroutine.yield(y * 10)
  return z
end
print("coro", ct.coro(co_body))
local co = coroutine.wrap(function(a)
  local r = ct.yielder(a)
  local r2 = ct.yielder_k()
  print("in coro", r, r2, ct.isyieldable())
  return "done"
end)
print("yield", co(21))
print("yield k", co("resumed"))
print("yield end", co("resumed again"))
print("main yieldable", ct.isyieldable())

-- continuations (lua_callk, lua_pcallk): without a yield the function goes on after the
-- call; after one its continuation ends it
capitest_went_on = nil
print("callk", ct.callk(function(a) return a + 1, "r2" end, 1), capitest_went_on)
capitest_went_on = nil
co = coroutine.wrap(function()
  return ct.callk(function(a) local b = coroutine.yield(a) return b * 2, "r2" end, 5)
end)
print("callk yields", co())
print("callk resumed", co(8))
print("went on", capitest_went_on)
co = coroutine.wrap(function() return "end", ct.pcallk(function() coroutine.yield("p") error("boom") end) end)
print("pcallk yields", co())
print("pcallk error after the yield", co())
print("went on", capitest_went_on)
co = coroutine.wrap(function() return ct.pcallk(function(x) return coroutine.yield(x), "r2" end, "q") end)
print("pcallk yields", co())
print("pcallk resumed", co("v"))
print("went on", capitest_went_on)
co = coroutine.wrap(function() return ct.pcallk(function() error({code = 7}) end) end)
local r1, r2 = co()
print("pcallk error without a yield", r1, r2.code, capitest_went_on)
capitest_went_on = nil
print("pcallk error outside a coroutine", select("#", ct.pcallk(error, "e")), capitest_went_on)
capitest_went_on = nil
-- nested: both functions yielded through, both continuations run, innermost first
co = coroutine.wrap(function()
  return ct.callk(ct.pcallk, function() return coroutine.yield("inner") end)
end)
print("nested yields", co())
print("nested resumed", co("w"))
print("went on", capitest_went_on)
-- a continuation that yields again
co = coroutine.wrap(function()
  return ct.callk(function() coroutine.yield(1); coroutine.yield(2); return 3 end)
end)
print("twice", co(), co(), co())

print(ct.dump(function(x) return x * 2 + 1 end))
local function hooked(a)
  local b = a + 1
  return b
end
local ok, log = ct.hook(function()
  hooked(1)
  return 1
end)
print("hook", ok)
for _, e in ipairs(log) do print("", e) end

print("gc", ct.gc())
do
  local u1, u2 = 1, 2
  local function f(a, b) return u1, u2 end
  local function g() return u1 end
  print("misc", ct.misc(f, g))
  print("misc upvalues", f())
end
print("bench functions", ct.noop(1, 2), ct.add(40, 2), pcall(ct.add, 1))
print("debug", ct.debug(function() end))

do
  local closed = {}
  local obj = setmetatable({}, {__close = function(o, err) closed[#closed + 1] = tostring(err) end})
  print("toclose", ct.toclose(obj), #closed, closed[1])
end

for i = 1, 50 do ct.newcounter("tmp" .. i) end
collectgarbage()
collectgarbage()
print("gc'ed counters", ct.gccount() >= 40)
