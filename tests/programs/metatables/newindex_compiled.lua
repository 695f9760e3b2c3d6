-- SETFIELD of a key the table has no live slot for, as compiled code runs it: a raw insert
-- when the table has no __newindex (no metatable, or one without it; a field set to nil and
-- set again), and __newindex otherwise (a function or a table, added or removed while a loop
-- runs). New globals (SETTABUP) too. Each loop runs long enough to be compiled.
local function fill(t, n)
  for i = 1, n do
    t.a = i; t.b = i * 2; t.a = nil; t.c = t.b; t.a = i
  end
  return t
end
local log = {}
local plain = fill({}, 100)
local withmeta = fill(setmetatable({}, {__index = {z = 26}}), 100)
local viafn = fill(setmetatable({}, {__newindex = function(t, k, v) log[#log + 1] = k; rawset(t, k, v) end}), 100)
local store = {}
local viatable = fill(setmetatable({}, {__newindex = store}), 100)
print(plain.a, plain.b, plain.c, withmeta.a, withmeta.c, withmeta.z)
print(viafn.a, viafn.c, #log, table.concat(log, ","))
print(rawget(viatable, "a"), store.a, store.b, store.c)

-- __newindex added and removed while a loop runs
local mt = {}
local obj = setmetatable({}, mt)
local caught = 0
for i = 1, 300 do
  if i == 100 then mt.__newindex = function(t, k, v) caught = caught + 1 end end
  if i == 200 then mt.__newindex = nil end
  obj["k" .. (i % 7)] = nil            -- SETTABLE: keep the keys absent
  obj.x = nil
  obj.x = i
end
print(obj.x, caught)

-- new globals from compiled code, then read back
for i = 1, 120 do
  if i % 40 == 0 then _G["g" .. i] = nil end
  newglobal_a = i; newglobal_b = (newglobal_b or 0) + 1
end
print(newglobal_a, newglobal_b)

-- a table grown by many new string keys in one compiled loop
local keys = {}
for i = 1, 200 do keys[i] = "key" .. i end
local grown = {}
local function grow(t) for i = 1, #keys do local k = keys[i]; t.dummy = i; t[k] = i end; return t end
grow(grown)
local n = 0
for k, v in pairs(grown) do n = n + 1 end
print(n, grown.key200, grown.dummy)
