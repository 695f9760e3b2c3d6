-- debug.traceback: messages and levels, another coroutine's stack (suspended, running
-- another, dead of an error), and the names lua5.4 gives frames: metamethods, for
-- iterators, hooks, fields, locals, upvalues, tail calls.
print(debug.traceback("msg"))
print(debug.traceback("level 2", 2))
print(debug.traceback())
print(debug.traceback(nil, 1))
print(debug.traceback(42))
print(type(debug.traceback({})), debug.traceback(true))
print(debug.traceback("neg", -1))

local co = coroutine.create(function(a)
  local function deeper() coroutine.yield(1) end
  deeper()
  error("boom")
end)
coroutine.resume(co)
print(debug.traceback(co))
print(debug.traceback(co, "with message"))
print(debug.traceback(co, "from level 1", 1))
print(coroutine.resume(co))
print(coroutine.status(co))
print(debug.traceback(co, "dead"))
print(coroutine.close(co))
print(debug.traceback(co, "closed"))
print(debug.traceback(coroutine.create(print), "new"))

-- a coroutine that resumed the running one
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function()
    print(debug.traceback(outer, "outer, seen from inner"))
    print(debug.traceback("inner itself"))
  end)
  coroutine.resume(inner)
end)
coroutine.resume(outer)

-- names of frames
local mt = {}
mt.__add = function(a, b) print(debug.traceback("in __add")) return 0 end
mt.__index = function(t, k) print(debug.traceback("in __index")) return 0 end
mt.__lt = function(a, b) print(debug.traceback("in __lt")) return true end
mt.__concat = function(a, b) print(debug.traceback("in __concat")) return "" end
mt.__close = function() print(debug.traceback("in __close")) end
local obj = setmetatable({}, mt)
local _ = obj + 1
_ = obj.missing
_ = obj < obj
_ = obj .. "x"
do
  local tbc <close> = obj
end
for _ in function(s, i) if not i then print(debug.traceback("iterator")) return 1 end end do end
local t = {field = function() print(debug.traceback("a field")) end}
t.field()
local function tail2() print(debug.traceback("after a tail call")) end
local function tail1() return tail2() end
tail1()
debug.sethook(function() print(debug.traceback("in a hook")) debug.sethook() end, "l")
local after = 1

-- an error's traceback through a metamethod (xpcall with debug.traceback)
local bad = setmetatable({}, {__index = function(t, k) error("no field " .. k) end})
print(xpcall(function() return bad.x end, debug.traceback))
