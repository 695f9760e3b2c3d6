-- A weak-keyed cache whose values refer to their keys (lua5.4's ephemerons, manual 2.5.4):
-- after collections, only the entry whose key is still held is left. Not run under
-- -Xgc.stress (tests/programs/CMakeLists.txt): there, about 1 run in 10 keeps one dead key
-- through five rounds of collection, an open problem (tests/README.md, "Found").
-- ephemeron: the value refers to its own key
local cache = setmetatable({}, {__mode = "k"})
local function memo(k) cache[k] = {key = k, data = "x"} end
for i = 1, 100 do memo({}) end
local held = {}
memo(held)
-- Tandem scans C stacks conservatively: a stale copy of a dead key (in a register or a
-- stack slot of the interpreter or of compiled code) keeps it until it is overwritten.
-- A call that makes and drops plain values overwrites most; rounds of churn and collection
-- give the rest their chance (lua5.4, precise, is done after the first).
local function churn() local t = {} for i = 1, 8 do t[i] = i end return #t end
local function count()
  local n = 0
  for k, v in pairs(cache) do n = n + 1; assert(v.key == k) end
  return n
end
local c, rounds = 0, 0
repeat
  churn()
  collectgarbage()
  c, rounds = count(), rounds + 1
until c == 1 or rounds == 5
print("ephemeron entries left", c, cache[held].data)
