-- Files dropped without close are closed by the collector (issue 15): their buffered data
-- was lost.
local name = os.tmpname()
-- Tandem scans C stacks conservatively: a call that makes and drops plain values first
-- overwrites the interpreter's stale copies of the last objects made (lua5.4 needs none).
local function churn() local t = {} for i = 1, 8 do t[i] = i end return #t end
local function write_and_drop()
  local f = assert(io.open(name, "w"))
  f:write("unflushed data")   -- buffered, never flushed by hand
end
write_and_drop()
churn()
collectgarbage()
local f = assert(io.open(name))
print(f:read("a"))
f:close()

-- a file closed by hand is not closed again
local function closed_by_hand()
  local g = assert(io.open(name, "w"))
  g:write("once")
  g:close()
end
closed_by_hand()
churn()
collectgarbage()
f = assert(io.open(name))
print(f:read("a"))
f:close()

-- many dropped handles: the descriptors are given back, so opening goes on
for i = 1, 3000 do
  local h = assert(io.open(name))
  h:read(1)
end
print("3000 opens")
os.remove(name)
