-- pcall and xpcall: results, handlers, nesting.
print(pcall(function(...) return ... end, 1, 2, 3))
print(pcall(error))
print(pcall(error, nil))
print(pcall(error, "msg", 0))
print(select("#", pcall(error)))
-- xpcall passes the error to the handler and returns its result
print(xpcall(function() error("bad", 0) end, function(m) return "handled: " .. m end))
print(xpcall(function(a, b) return a + b end, print, 3, 4))
-- the handler runs before the stack unwinds: it can see the error position
print(xpcall(function() local x = nil; return x.y end, function(m) return (m:gsub("^.-:%d+: ", "")) end))
-- a handler that returns several values: only the first is kept
print(xpcall(error, function() return 1, 2 end))
-- an error inside the handler
local ok, err = xpcall(error, function() error("again") end)
print(ok, type(err))
-- nested pcalls
print(pcall(pcall, error, "inner"))
print(pcall(function()
  local ok2, e2 = pcall(error, "level1", 0)
  error("rethrown " .. e2, 0)
end))
-- pcall with a non-callable
print(pcall(42))
print(pcall(pcall))
print(xpcall(42, function(m) return "H:" .. m end))
-- error objects pass through unchanged
local obj = {}
local ok3, e3 = pcall(error, obj)
print(ok3, e3 == obj)
-- pcall returns true followed by every result, including nils
print(pcall(function() return nil, nil end))
print(select("#", pcall(function() return nil, nil end)))
-- xpcall with debug.traceback as handler returns a string (content varies)
local ok4, tb = xpcall(error, debug.traceback, "tb test")
print(ok4, type(tb), tb:match("^tb test") ~= nil, tb:find("stack traceback:", 1, true) ~= nil)
