-- Errors crossing C frames: raised in C and caught in Lua, raised in Lua under a C call
-- and caught there or above, tracebacks through C functions, and finally an uncaught error
-- from a C function, whose message and traceback (stderr) must be lua5.4's.
local ct = require "capitest"
local lpeg = require "lpeg"
local cjson = require "cjson"

-- a Lua error inside a Lua function called by C (lpeg's match-time capture) reaches pcall
local boom = lpeg.Cmt(lpeg.P"x", function() error("from the capture") end)
print(pcall(lpeg.match, boom, "x"))
print(pcall(lpeg.match, lpeg.Cmt(lpeg.P"x", function() error({code = 7}) end), "x"))
-- error objects that are not strings keep their identity
local obj = {}
local ok, e = pcall(ct.calls, function(a) if type(a) == "string" then error(obj) end return 1 end)
print(ok, e)
-- xpcall's handler sees the C frames in the traceback
print(xpcall(ct.error, function(m) return (debug.traceback(m, 1):gsub("0x%x+", "ADDR")) end, "luaL_error"))
-- an error inside a __gc of a C userdata is a warning, not an error
warn("@on")
-- nested C -> Lua -> C -> Lua
local inner = function() return ct.error("checkint", "x") end
print(pcall(ct.calls, function(a) if type(a) == "string" then inner() end return 1 end))
print(select("#", pcall(cjson.decode, "[")))
-- yields across C functions: refused where lua5.4 refuses them
print(coroutine.resume(coroutine.create(function() ct.calls(function() coroutine.yield(1) end) end)))
print(coroutine.resume(coroutine.create(function() return ct.yielder(3) end)))
print(pcall(ct.yielder, 1))
print(pcall(coroutine.wrap(function()
  return lpeg.match(lpeg.Cmt(1, function() coroutine.yield("in cmt") return true end), "x")
end)))
local function level2() ct.error("argerror") end
local function level1() level2() end
level1()
