-- Yields that lua5.4 lets through C functions: inside __pairs, inside a chunk run by dofile,
-- inside a __close handler while an error unwinds through pcall.
local t = setmetatable({}, {__pairs = function(t)
  coroutine.yield("in __pairs")
  return next, {10, 20}, nil
end})
local co = coroutine.wrap(function()
  for k, v in pairs(t) do coroutine.yield(k, v) end
  return "pairs done"
end)
print(co()) print(co()) print(co()) print(co())

local name = os.tmpname()
local f = assert(io.open(name, "w"))
f:write("local a = coroutine.yield('from dofile') return a * 2")
f:close()
co = coroutine.wrap(function() return dofile(name) end)
print(co()) print(co(21))
os.remove(name)

co = coroutine.wrap(function()
  local ok, e = pcall(function()
    local x <close> = setmetatable({}, {__close = function(_, err)
      local got = coroutine.yield("yield in __close", err)
      print("resumed with", got)
    end})
    error("boom", 0)
  end)
  return ok, e
end)
print(co()) print(co("value"))

-- still refused where lua5.4 refuses: a C function that is not written for it
co = coroutine.wrap(function()
  return table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end)
end)
print(pcall(co))
