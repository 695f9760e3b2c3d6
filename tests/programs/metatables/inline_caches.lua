-- The JIT's inline caches of field sites (jit/jit_ic.c): each site remembers where its key
-- sat in the table it indexes and in each table up the __index chain, and where "__index"
-- sat in each metatable. Every way such a remembered position can stop being right is made
-- to happen here while the same site keeps running, and the results must stay the
-- interpreter's (and lua5.4's): objects of other layouts at one site, keys that move when
-- a table grows, keys removed (dead nodes) and added back, absent keys in full tables
-- (the key filter has the bit, a full probe answers), keys added to the object or to a
-- class in the middle of a chain, __index replaced by another table, a function, a string
-- or removed, metatables removed or without __index, chains deeper than the walker goes,
-- and field stores to present, dead and new keys. Every function is compiled at its first
-- call, so a loop of a few iterations already runs compiled code with a warm cache.

local function class(parent)
  local c = setmetatable({}, parent and {__index = parent} or nil)
  c.__index = c
  return c
end

-- 1. one site, objects of different layouts: the key sits at another node in each
local function getx(o) return o.x end
local layouts = {}
for n = 0, 12 do
  local o = {}
  for j = 1, n do o["f" .. j] = j end   -- fields first: x lands after them
  o.x = n * 10
  for j = 1, 3 do o["g" .. j] = j end
  layouts[#layouts + 1] = o
end
local sum = 0
for _ = 1, 3 do
  for _, o in ipairs(layouts) do sum = sum + getx(o) end
end
print("layouts", sum)

-- 2. a key that moves: the table grows (rehash) between reads at one site
local grow = {x = 1}
local seen = {}
for i = 1, 200 do
  grow["k" .. i] = i
  seen[#seen + 1] = getx(grow)
  grow.x = grow.x + 1
end
print("growing", seen[1], seen[50], seen[200], grow.x)

-- 3. absent keys: a small table (the filter proves it at once), a table with so many keys
-- that every filter bit is set (a full probe must answer), and a key removed (a dead node)
local function gety(o) return o.y end
local small = {a = 1, b = 2}
local full = {}
for i = 1, 300 do full["key" .. i] = i end
print("absent", gety(small), gety(full), gety(small), gety(full))
full.y = "y here"
print("added", gety(full), gety(small))
full.y = nil
print("removed", gety(full))
full.y = "back"
print("back", gety(full))

-- 4. a chain four deep with methods at each level, and changes while a loop runs
local A = class()
function A:name() return "A" end
function A:level() return 1 end
function A:deep() return "deep-A" end
local B = class(A); function B:level() return 2 end
local C = class(B); function C:level() return 3 end
local D = class(C)
local obj = setmetatable({}, D)
local function calls(o) return o:name() .. o:level() .. o:deep() end
local out = {}
for i = 1, 120 do
  if i == 10 then function C:name() return "C" end end            -- key appears mid-chain
  if i == 20 then C.name = nil end                                -- dead at that level
  if i == 30 then obj.name = function() return "own" end end     -- on the object itself
  if i == 40 then obj.name = nil end                              -- dead on the object
  if i == 50 then getmetatable(C).__index = A end                 -- a level skipped
  if i == 60 then getmetatable(C).__index = B end
  if i == 70 then                                                 -- B grows: its keys move
    for j = 1, 40 do B["m" .. j] = j end
  end
  if i == 80 then D.__index = function(t, k) return function() return "fn" .. k end end end
  if i == 90 then D.__index = D end
  if i == 100 then getmetatable(B).__index = "str" end            -- a string __index
  if i == 110 then getmetatable(B).__index = A end
  local ok, r = pcall(calls, obj)
  out[#out + 1] = ok and r or ("error: " .. tostring(r):gsub("^.-:%d+: ", ""))
end
for _, i in ipairs({1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}) do print(i, out[i]) end

-- 4b. a class with many methods: most sit away from their home node, so a call site's first
-- run finds another key where it looks up the chain and learns the position; the second
-- run goes straight there
local Big = class()
for j = 1, 40 do Big["m" .. j] = function(self) return j end end
local Sub = class(Big)
local calls40 = {}
for j = 1, 40 do calls40[#calls40 + 1] = "o:m" .. j .. "()" end
local callall = load("local o = ... return " .. table.concat(calls40, " + "))
local bigobj = setmetatable({}, Sub)
print("many methods", callall(bigobj), callall(bigobj), callall(setmetatable({}, Big)))

-- 5. metatables without __index, removed, added late
local bare = setmetatable({v = 1}, {})
local function getw(o) return o.w end
print("no __index", getw(bare), getw(bare))
getmetatable(bare).__index = {w = "late"}
print("added __index", getw(bare))
getmetatable(bare).__index = nil
print("removed __index", getw(bare))
setmetatable(bare, nil)
print("no metatable", getw(bare))
setmetatable(bare, {__index = {w = "again"}})
print("metatable again", getw(bare))

-- 6. chains deeper than the walker (four tables up): the interpreter's walk answers
local top = {far = "far away"}
local t6 = top
for _ = 1, 7 do t6 = setmetatable({}, {__index = t6}) end
local function getfar(o) return o.far end
print("deep chain", getfar(t6), getfar(t6))
local k6 = t6
for _ = 1, 3 do k6 = getmetatable(k6).__index end
print("four up", getfar(k6))
top.far = nil
print("gone", getfar(t6))

-- 7. one call site, objects of several classes (polymorphic), each class a different size
local Shape = class()
function Shape:area() return 0 end
function Shape:kind() return "shape" end
local Sq = class(Shape); function Sq:area() return self.s * self.s end
local Ci = class(Shape); function Ci:area() return 3 * self.r * self.r end; function Ci:kind() return "circle" end
for j = 1, 20 do Ci["pad" .. j] = j end
local Tr = class(Shape); function Tr:kind() return "tri" end
local objs = {setmetatable({s = 2}, Sq), setmetatable({r = 1}, Ci), setmetatable({}, Tr), setmetatable({}, Shape)}
local acc = {}
for i = 1, 40 do
  local o = objs[i % 4 + 1]
  acc[#acc + 1] = o:kind() .. o:area()
end
print("polymorphic", acc[1], acc[2], acc[3], acc[4], acc[37], acc[40])

-- 8. field stores: a present key, a dead key, a new key in a small and in a full table,
-- a key at another node in each of several layouts, and keys that move as the table grows
local function setz(o, v) o.z = v end
local s1 = {z = 0}
setz(s1, 1); setz(s1, 2)
s1.z = nil
setz(s1, 3)
local s2 = {}
setz(s2, 4)
setz(full, 5)
local zs = 0
for _, o in ipairs(layouts) do setz(o, 7); zs = zs + o.z end
local s3 = {}
for i = 1, 100 do s3["n" .. i] = i; setz(s3, i) end
print("stores", s1.z, s2.z, full.z, zs, s3.z)

-- 9. a key that is a different string with the same bytes (built at run time): found by
-- its bytes, never by the cached identity
local built = {}
built[("k"):rep(1) .. "ey"] = "by bytes"
local function getkey(o) return o.key end
print("bytes", getkey(built), getkey(built))

-- 10. GETTABUP: an environment with a metatable chain
local function envread()
  local _ENV = setmetatable({}, {__index = setmetatable({here = "env"}, {__index = _G})})
  local r = {}
  for _ = 1, 3 do r[#r + 1] = here .. type(print) .. tostring(nothere) end
  return r[1], r[3]
end
print("env", envread())
