-- spawn/join, results, arguments, ids, errors through join
print("main id", thread.id())
local h = thread.spawn(function(a, b, c) return a + b, c, thread.id() end, 1, 2, "three")
print(h:join())
print(tostring(h))
print("handle id", h:id())
-- no results
print(select("#", thread.spawn(function() end):join()))
-- many results
print(thread.spawn(function(...) return ... end, 1, nil, 3, nil):join())
-- join twice gives the same results
local h2 = thread.spawn(function() return {1, 2, 3} end)
local r1 = h2:join()
local r2 = h2:join()
print(#r1, r1 == r2)
-- an error in a thread comes back through join, naming the thread
local bad = thread.spawn(function() error("boom") end)
local ok, msg = pcall(bad.join, bad)
print(ok, msg)
local bad2 = thread.spawn(function() error({code = 7}) end)
print(pcall(bad2.join, bad2))
local bad3 = thread.spawn(function() local x = nil; return x.field end)
print(pcall(bad3.join, bad3))
-- closures share upvalues with the spawner
local shared = 0
thread.spawn(function() shared = 42 end):join()
print("shared", shared)
-- the debug library reaches the same upvalue, open on the spawner's stack, through the same
-- protocol as GETUPVAL/SETUPVAL
local open = 1
local function peek() return open end
thread.spawn(function() debug.setupvalue(peek, 1, 7) end):join()
print("debug upvalue", open, select(2, thread.spawn(function() return debug.getupvalue(peek, 1) end):join()))
-- bad arguments
print(pcall(thread.spawn))
print(pcall(h.join, {}))
print(pcall(thread.sleep, -1))
print(pcall(thread.channel, -1))
-- a thread cannot join itself
local selfh
local box = thread.channel(1)
selfh = thread.spawn(function() local me = box:recv(); return pcall(me.join, me) end)
box:send(selfh)
print(selfh:join())
-- sleep and yield
thread.sleep(0.01)
thread.yield()
print("done")
