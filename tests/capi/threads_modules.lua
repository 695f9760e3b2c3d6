-- C modules used by four language threads at once (native threads run them in parallel):
-- cjson round trips, LPeg matches, capitest userdata with __gc and registry references,
-- while the threads allocate (collections happen with module C frames on every stack).
-- lua5.4 has no threads: the expectation is written here.
local cjson = require "cjson"
local lpeg = require "lpeg"
local ct = require "capitest"
local word = lpeg.C(lpeg.R"az"^1)
local words = lpeg.Ct((word + 1)^0)

local function work(id)
  local ok = 0
  for i = 1, 300 do
    local doc = {id = id, i = i, list = {i, i + 1, "s" .. i}, nested = {deep = {value = i * id}}}
    local back = cjson.decode(cjson.encode(doc))
    if back.nested.deep.value == i * id and back.list[3] == "s" .. i then ok = ok + 1 end
    local w = words:match("thread " .. id .. " round " .. i .. " done")
    if #w == 3 and w[3] == "done" then ok = ok + 1 end
    local c = ct.newcounter("t" .. id)
    c:inc(i)
    if select(1, c:get()) == i then ok = ok + 1 end
    if select(2, ct.registry(c)) == 123 then ok = ok + 1 end
  end
  return ok
end

capitest_global = 123
local hs = {}
for id = 1, 4 do hs[id] = thread.spawn(work, id) end
local total = 0
for id = 1, 4 do total = total + hs[id]:join() end
print("total", total)
collectgarbage()
collectgarbage()
print("finalized counters", ct.gccount() > 0)
