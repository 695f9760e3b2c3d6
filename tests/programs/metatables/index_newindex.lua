-- __index and __newindex as tables and as functions, and rawget/rawset.
local defaults = {color = "red", size = 1}
local obj = setmetatable({size = 5}, {__index = defaults})
print(obj.color, obj.size, obj.missing, rawget(obj, "color"))

-- function __index receives the table and the key
local calls = {}
local lazy = setmetatable({}, {__index = function(t, k)
  calls[#calls + 1] = k
  local v = k .. "!"
  rawset(t, k, v)
  return v
end})
print(lazy.a, lazy.b, lazy.a, #calls)

-- __index chains through several tables
local a = {fa = "from a"}
local b = setmetatable({fb = "from b"}, {__index = a})
local c = setmetatable({}, {__index = b})
print(c.fa, c.fb, c.fc)

-- __newindex as a function: a read-only proxy with a write log
local log = {}
local store = {}
local proxy = setmetatable({}, {
  __index = store,
  __newindex = function(t, k, v)
    log[#log + 1] = tostring(k) .. "=" .. tostring(v)
    rawset(store, k, v)
  end,
})
proxy.x = 1
proxy.y = 2
proxy.x = 3
print(proxy.x, proxy.y, rawget(proxy, "x"), table.concat(log, " "))

-- __newindex as a table redirects the assignment
local target = {}
local redirect = setmetatable({}, {__newindex = target})
redirect.k = "v"
print(rawget(redirect, "k"), target.k)

-- __newindex is not called for existing keys
local existing = setmetatable({k = 1}, {__newindex = function() error("should not run") end})
existing.k = 2
print(existing.k)

-- __index on strings via the string metatable
print(("abc").len == string.len, getmetatable("").__index == string)

-- __index on a number errors normally
print(pcall(function() return (5).x end))

-- array-like access with __index function computing values
local squares = setmetatable({}, {__index = function(_, n) return n * n end})
print(squares[4], squares[12])
