-- A table made weak after a constructor filled it (issue 23): small constructed tables hold
-- their parts inside the table's own block (vm_table_new), and turning weak moves the slots
-- into weak blocks. The old inline parts must not keep the values: the table's block is
-- scanned conservatively, so a stale copy there would be a strong reference for the
-- table's whole life. Garbage is made in helper functions, as in weak_values.lua.
local function make_hash()
  return setmetatable({a = {}, b = {}, keep = "s"}, {__mode = "v"})
end
local function make_array()
  return setmetatable({{}, {}, {}, "s"}, {__mode = "v"})
end
local function make_keys()
  return setmetatable({[{}] = 1, [{}] = 2, k = 3}, {__mode = "k"})
end
local h, a, k = make_hash(), make_array(), make_keys()
collectgarbage()
collectgarbage()

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end
print("hash", count(h), h.keep)
print("array", count(a), a[4])
print("keys", count(k), k.k)
-- the parts still work after the move: new keys go into the weak blocks
h.c = {}
h.d = "kept"
a[5] = "five"
collectgarbage()
print(count(h), h.d, count(a), a[5])
