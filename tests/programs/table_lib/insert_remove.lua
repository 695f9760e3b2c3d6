-- table.insert and table.remove in both forms, with error cases.
local function show(t) return "{" .. table.concat(t, ",") .. "}" end
local t = {}
table.insert(t, "a")
table.insert(t, "c")
table.insert(t, 2, "b")
table.insert(t, 1, "start")
table.insert(t, #t + 1, "end")
print(show(t), #t)
print(table.remove(t), show(t))
print(table.remove(t, 1), show(t))
print(table.remove(t, 2), show(t))
print(table.remove(t, #t + 1), show(t))
print(pcall(table.insert, t, 10, "x"))
print(pcall(table.insert, t, 0, "x"))
print(pcall(table.insert, t))
print(pcall(table.insert, t, 1, 2, 3))
local okr, er = pcall(table.remove, t, 10)
print(okr, (er:match("position out of bounds")))
-- remove from an empty table
local e = {}
print(table.remove(e), table.remove(e, 0), table.remove(e, 1), #e)
-- remove with #t == 0 and position 0 is allowed
local z = {[0] = "zero"}
print(table.remove(z, 0), z[0])
-- a queue using insert/remove at the front
local q = {}
for i = 1, 5 do table.insert(q, i) end
local order = {}
while #q > 0 do order[#order + 1] = table.remove(q, 1) end
print(show(order))
-- insert and remove honour metamethods (5.4)
local log = {}
local proxy = setmetatable({}, {
  __len = function() return 2 end,
  __index = function(_, k) return "v" .. k end,
  __newindex = function(_, k, v) log[#log + 1] = k .. "=" .. tostring(v) end,
})
table.insert(proxy, "new")
print(table.concat(log, " "))
-- many inserts at the front
local big = {}
for i = 1, 200 do table.insert(big, 1, i) end
print(big[1], big[200], #big)
