-- A weak-keyed cache whose values refer to their keys (lua5.4's ephemerons, manual 2.5.4):
-- after collections, only the entry whose key is still held is left.
-- ephemeron: the value refers to its own key
local cache = setmetatable({}, {__mode = "k"})
local function memo(k) cache[k] = {key = k, data = "x"} end
for i = 1, 100 do memo({}) end
local held = {}
memo(held)
-- Tandem scans C stacks conservatively: a stale copy of a dead key (in a register or a
-- stack slot of the interpreter or of compiled code) keeps it until it is overwritten.
-- Boehm itself leaves one more: the first object of the block that holds the tail of the
-- last non-empty thread-local free list it marks, whose address a scratch register still
-- holds when Boehm saves the registers it scans (tests/README.md, "Found"). Under
-- -Xgc.stress that object was often a dead key, or its value's node block, for as long as
-- that free list lasted. Boehm marks the lists by size, smallest first: churn allocates
-- 16-slot arrays (272 bytes, 288-byte objects, larger than anything this cache made), so
-- the last list marked is one of blocks that hold no key nor value of the cache. Making
-- and dropping values also overwrites stale copies; rounds of churn and collection give
-- the rest their chance (lua5.4, precise, is done after the first).
local function churn()
  local n = 0
  for j = 1, 20 do local t = {} for i = 1, 16 do t[i] = i end n = n + #t end
  return n
end
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
