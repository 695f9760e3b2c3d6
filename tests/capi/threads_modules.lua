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

-- Errors through module frames while the module lock is in use (threads have run): a
-- metamethod that a module function's API call runs pcalls a module function that fails,
-- and Lua code that a module's lua_call runs fails through it. The lock's levels follow the
-- C frames (vm/capi/vm_capi_lock.c): afterwards four threads use the modules again, which a
-- leaked level would hang and a lost one would let race.
local caught = 0
local proxy = setmetatable({}, {
  __index = function(_, k) if not pcall(ct.error, "luaL_error") then caught = caught + 1 end return k end,
  __newindex = function() end,
  __len = function() return 3 end})
for _ = 1, 50 do ct.tables(proxy) end
for _ = 1, 50 do
  local ok, e = pcall(ct.calls, function(a) if a == 1 then error("deep") end return a end)
  if not ok and tostring(e):find("deep") then caught = caught + 1 end
end
print("caught", caught)
hs = {}
for id = 1, 4 do hs[id] = thread.spawn(work, id) end
total = 0
for id = 1, 4 do total = total + hs[id]:join() end
print("total again", total)
