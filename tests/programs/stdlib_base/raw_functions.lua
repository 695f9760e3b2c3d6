-- rawget, rawset, rawequal, rawlen bypass metamethods.
local log = {}
local mt = {
  __index = function(_, k) log[#log + 1] = "index " .. tostring(k); return "meta" end,
  __newindex = function(_, k) log[#log + 1] = "newindex " .. tostring(k) end,
  __eq = function() return true end,
  __len = function() return 99 end,
}
local t = setmetatable({}, mt)
print(t.a, rawget(t, "a"))
t.b = 1
rawset(t, "c", 2)
print(rawget(t, "b"), rawget(t, "c"), t.c)
print(table.concat(log, ", "))
local u = setmetatable({}, mt)
print(t == u, rawequal(t, u), rawequal(t, t), rawequal("a", "a"), rawequal(1, 1.0))
print(#t, rawlen(t), rawlen({1, 2, 3}), rawlen("four"))
print(pcall(rawlen, 5))
print(pcall(rawget, "str", 1))
print(pcall(rawset, {}, nil, 1))
print(rawset(t, "d", 4) == t)
print(rawequal(0, -0), rawequal(0.0, -0.0), rawequal({}, {}))
-- rawset can store into a protected table without triggering __newindex
local ro = setmetatable({}, {__newindex = function() error("read-only table", 2) end})
print(pcall(function() ro.x = 1 end))
rawset(ro, "x", 1)
print(ro.x)
