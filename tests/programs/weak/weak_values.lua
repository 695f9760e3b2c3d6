-- Weak values (issue 15): a __mode = "v" table was never cleared, so a loop waiting for an
-- entry to go away hung. Garbage is made in helper functions (their frames are gone when
-- the collection runs), and only what lua5.4 guarantees after a full collection is printed.
local wv = setmetatable({}, {__mode = "v"})
local keep = {name = "keep"}

local function fill()
  for i = 1, 10 do wv[i] = {i} end          -- array part
  wv.t = {}                                  -- hash part: table
  wv.f = function() return 1 end             -- closure
  wv.co = coroutine.create(function() end)   -- coroutine
  wv.s = "a string"                          -- strings are values: never removed
  wv.n = 42
  wv.b = true
  wv.keep = keep
  wv[11] = keep
end
fill()
collectgarbage()

local keys = {}
for k, v in pairs(wv) do keys[#keys + 1] = tostring(k) .. "=" .. type(v) end
table.sort(keys)
print(table.concat(keys, " "))
print(wv.keep == keep, wv[11].name, #keys)

-- the hang case: wait until the last collectable value is gone
wv.keep, wv[11] = nil, nil
wv.s, wv.n, wv.b = nil, nil, nil
local function more() for i = 1, 5 do wv[i] = {} end end
more()
local rounds = 0
repeat collectgarbage(); rounds = rounds + 1 until next(wv) == nil
print("empty after collections:", rounds >= 1)

-- a table that stops being weak keeps what it holds from then on
local mt = {__mode = "v"}
local t = setmetatable({}, mt)
local function put() t[1] = {}; t.x = {} end
put()
setmetatable(t, nil)
collectgarbage()
print("strong again:", type(t[1]), type(t.x))

-- and one made weak later loses it
local u = {}
local function put2() u[1] = {}; u.y = {} end
put2()
setmetatable(u, {__mode = "v"})
collectgarbage()
print("weak later:", u[1], u.y)

-- next() goes on after the collector removed the entries ahead of it
local w = setmetatable({}, {__mode = "v"})
local anchors = {}
local function put3()
  for i = 1, 20 do
    local v = {}
    w["k" .. i] = v
    if i % 2 == 0 then anchors[#anchors + 1] = v end
  end
end
put3()
local seen = 0
local k = next(w)
collectgarbage()
while k ~= nil do seen = seen + 1; k = next(w, k) end
local live = 0
for _ in pairs(w) do live = live + 1 end
print("traversal finished, live:", live)
