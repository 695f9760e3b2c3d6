-- Files dropped without close are closed by the collector (issue 15): their buffered data
-- was lost.
local name = os.tmpname()
local function write_and_drop()
  local f = assert(io.open(name, "w"))
  f:write("unflushed data")   -- buffered, never flushed by hand
end
write_and_drop()
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
