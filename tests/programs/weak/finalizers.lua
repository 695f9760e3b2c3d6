-- __gc finalizers (issue 15): they never ran, not at a collection, not at exit. Automatic
-- collections are stopped where the order matters (so that -Xgc.stress and lua5.4's own
-- pacing cannot run one early); collectgarbage() still collects.
collectgarbage("stop")
local log = {}
local function mk(name)
  return setmetatable({name = name}, {__gc = function(o) log[#log + 1] = o.name end})
end
local function three() mk("a"); mk("b"); mk("c") end
three()
-- Tandem scans C stacks conservatively: a call that makes and drops plain values first
-- overwrites the interpreter's stale copies of the last objects made (lua5.4 needs none).
local function churn() local t = {} for i = 1, 8 do t[i] = i end return #t end
churn()
collectgarbage()
print("order", table.concat(log, " "))   -- reverse order of marking

-- resurrection: the object is whole inside __gc and may be kept
local saved
local function res() setmetatable({v = 7, sub = {w = 8}}, {__gc = function(o) saved = o end}) end
res()
collectgarbage()
print("resurrected", saved.v, saved.sub.w)

-- finalized once; marked again by setmetatable inside __gc, finalized again
local times = 0
local function again()
  local mt = {}
  mt.__gc = function(o) times = times + 1; if times < 3 then setmetatable(o, mt) end end
  setmetatable({}, mt)
end
again()
for i = 1, 4 do collectgarbage() end
print("finalized", times, "times")

-- a __gc added to the metatable after setmetatable is not honoured
local mt = {}
local function late() setmetatable({}, mt) end
late()
mt.__gc = function() print("late __gc: must not run") end
collectgarbage()

-- a __gc field removed before the collection: nothing to call
local mt2 = {__gc = function() print("removed __gc: must not run") end}
local function removed() setmetatable({}, mt2) end
removed()
mt2.__gc = nil
collectgarbage()

-- an error in __gc is a warning (stderr, off by default), and the others still run
local after = {}
local function bad()
  setmetatable({}, {__gc = function() after[#after + 1] = "before" end})
  setmetatable({}, {__gc = function() error("boom") end})
  setmetatable({}, {__gc = function() after[#after + 1] = "after" end})
end
bad()
collectgarbage()
print("around the error", table.concat(after, " "))

-- weak values are cleared before the finalizer runs, weak keys only afterwards
local wv = setmetatable({}, {__mode = "v"})
local wk = setmetatable({}, {__mode = "k"})
local function both()
  local o = setmetatable({}, {__gc = function(o)
    print("in __gc: weak value gone", wv[1] == nil, "weak key still", wk[o])
  end})
  wv[1] = o
  wk[o] = "here"
end
both()
collectgarbage()
collectgarbage()
print("weak key gone after", next(wk))

-- finalizers may allocate, collect and make more finalizable objects
local function nested()
  setmetatable({}, {__gc = function()
    local t = {}
    for i = 1, 1000 do t[i] = {i} end
    setmetatable({}, {__gc = function() print("made inside __gc, finalized later") end})
  end})
end
nested()
collectgarbage()
collectgarbage()

-- at the end of the program, every marked object is finalized, most recent first
for i = 1, 3 do setmetatable({}, {__gc = function() print("at exit", i) end}) end
keep_me = setmetatable({}, {__gc = function() print("reachable, finalized at exit") end})
collectgarbage("restart")
print("end of main chunk")
