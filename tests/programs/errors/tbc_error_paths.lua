-- To-be-closed variables on error paths: a pcall inside __close does not replace the error
-- being propagated, an error raised by __close does; a __close removed after the
-- declaration is an error at scope exit; handlers run in reverse order with the error.
local ok, e = pcall(function()
  local x <close> = setmetatable({}, {__close = function(_, err)
    print("closing with", err)
    print("inner pcall", pcall(error, "inner"))
  end})
  error("outer", 0)
end)
print(ok, e)

ok, e = pcall(function()
  local a <close> = setmetatable({}, {__close = function(_, err) print("a sees", err) end})
  local b <close> = setmetatable({}, {__close = function(_, err) print("b sees", err) error("from b", 0) end})
  error("first", 0)
end)
print(ok, e)

ok, e = pcall(function()
  local mt = {__close = function() print("not called") end}
  local x <close> = setmetatable({}, mt)
  mt.__close = nil
end)
print(ok, e)

ok, e = pcall(function()
  local x <close> = setmetatable({}, {__close = 42})
end)
print(ok, e)

local function f()
  local x <close> = setmetatable({}, {__close = function(_, err) print("normal exit, err =", err) end})
  return "result"
end
print(f())
