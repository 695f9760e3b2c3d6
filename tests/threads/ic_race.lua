-- The JIT's inline caches of field sites (jit/jit_ic.c) shared by threads that race with
-- changes to the tables they read: readers call methods and read fields through __index
-- chains while writers add and remove keys (the class tables and the objects grow, so their
-- hash parts are rebuilt under the readers and keys move), replace __index tables and give
-- objects their own copies of methods. Every call site's cache is rewritten by every
-- thread. Which method a racing read finds is unspecified, but it is always one that was
-- stored under that name at some point: never another key's value, a nil where the key was
-- never absent, or a crash. arg[1]: rounds.
-- Bugs it caught: dead nodes reused for other keys (a method call got a number stored under
-- another name; vm/vm_table.c, "Races"), and reads that tested a slot, then loaded it again
-- (a racing removal made a method read nil where the __index chain would have gone on to a
-- class): the interpreter's GETFIELD/SELF, then compiled code's probes, chain walker and
-- miss handler (jit/jit_ic.c), which now decide on the copy they store.
local ROUNDS = tonumber(arg and arg[1]) or 60000
local READERS, WRITERS = 3, 1

local function class(parent)
  local c = setmetatable({}, parent and {__index = parent} or nil)
  c.__index = c
  return c
end
local Base = class()
function Base:kind() return "base" end
function Base:size() return 1 end
local Mid = class(Base)
function Mid:size() return 2 end
local Leaf = class(Mid)
local Alt = class(Base)
function Alt:kind() return "alt" end

local objs = {}
for i = 1, 8 do objs[i] = setmetatable({id = i}, Leaf) end

local valid_kind = {base = true, alt = true, own = true, mid = true}
local valid_size = {[1] = true, [2] = true, [3] = true}

local hs = {}
for r = 1, READERS do
  hs[#hs + 1] = thread.spawn(function()
    local bad = 0
    for n = 1, ROUNDS do
      local o = objs[(n + r) % #objs + 1]
      local k, s = o:kind(), o:size()
      if not valid_kind[k] or not valid_size[s] or o.id == nil then bad = bad + 1 end
    end
    return bad
  end)
end
for w = 1, WRITERS do
  hs[#hs + 1] = thread.spawn(function()
    for n = 1, ROUNDS do
      local m = n % 6
      local o = objs[n % #objs + 1]
      if m == 0 then Mid["pad" .. (n % 50)] = n             -- Mid grows: keys move
      elseif m == 1 then Mid["pad" .. ((n + 25) % 50)] = nil
      elseif m == 2 then getmetatable(Mid).__index = (n % 12 == 2) and Alt or Base
      elseif m == 3 then o.kind = function() return "own" end  -- the object grows
      elseif m == 4 then o.kind = nil
      else Mid.kind = (n % 12 == 5) and function() return "mid" end or nil end
      if n % 1000 == 0 then Leaf.size = (Leaf.size == nil) and function() return 3 end or nil end
    end
    return 0
  end)
end
local bad = 0
for _, h in ipairs(hs) do bad = bad + h:join() end
print("bad reads", bad)
