-- Any value can be an error object; tables carry structured information.
local E = {}
E.__index = E
E.__tostring = function(e) return "E(" .. e.code .. ")" end
local function raise(code) error(setmetatable({code = code}, E)) end
local ok, e = pcall(raise, 404)
print(ok, getmetatable(e) == E, e.code, tostring(e))
print(select(2, pcall(error, nil)))
print(select(2, pcall(error, true)))
print(select(2, pcall(error, 12.5)))
local f = function() end
print(select(2, pcall(error, f)) == f)
-- rethrowing preserves identity
local ok2, e2 = pcall(function()
  local ok3, inner = pcall(raise, 500)
  error(inner)
end)
print(ok2, e2.code)
-- try/catch helper with typed errors
local function try(fn, handlers)
  local ok4, err = pcall(fn)
  if ok4 then return "ok" end
  local kind = type(err) == "table" and err.kind or "string"
  local h = handlers[kind] or handlers.default
  return h(err)
end
print(try(function() error({kind = "io", msg = "disk full"}) end, {
  io = function(e) return "io handler: " .. e.msg end,
  default = function(e) return "default" end,
}))
print(try(function() error("plain", 0) end, {
  string = function(e) return "string handler: " .. e end,
}))
print(try(function() return 1 end, {}))
-- error objects through coroutines
local co = coroutine.create(function() error({kind = "co"}) end)
local okc, ec = coroutine.resume(co)
print(okc, ec.kind)
-- tostring of an error value with __tostring used by a handler
print(xpcall(raise, function(err) return "handled " .. tostring(err) end, 7))
