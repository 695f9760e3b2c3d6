-- xpcall message handlers: augmenting messages, handler errors, arguments.
local function handler(m)
  return {original = m, handled = true}
end
local ok, r = xpcall(function() error("boom", 0) end, handler)
print(ok, r.original, r.handled)
-- the handler receives non-string error objects unchanged
local obj = {}
local ok2, r2 = xpcall(function() error(obj) end, function(e) return e == obj end)
print(ok2, r2)
-- handler that strips the position
local ok3, r3 = xpcall(function() local x = 1 + nil end, function(e) return (e:gsub("^[^:]+:%d+: ", "")) end)
print(ok3, r3)
-- arguments are passed to the protected function
print(xpcall(function(a, b, c) return a .. b .. c end, handler, "x", "y", "z"))
-- nested xpcall: the inner handler runs for the inner error only
local log = {}
local okn, rn = xpcall(function()
  local iok, ir = xpcall(function() error("inner", 0) end, function(e) log[#log + 1] = "inner handler"; return e .. "!" end)
  log[#log + 1] = "inner result " .. tostring(ir)
  error("outer", 0)
end, function(e) log[#log + 1] = "outer handler"; return e .. "?" end)
print(okn, rn, table.concat(log, ", "))
-- a handler that counts the stack depth with a loop over debug-free recursion
local depth = 0
local function recurse(n) if n == 0 then error("deep", 0) end recurse(n - 1) end
local okd, rd = xpcall(recurse, function(e) depth = depth + 1; return e end, 50)
print(okd, rd, depth)
-- the handler is also used for errors raised by built-ins
print(xpcall(string.rep, function(e) return "H: " .. e end))
-- handler missing
print(pcall(xpcall, function() end))
