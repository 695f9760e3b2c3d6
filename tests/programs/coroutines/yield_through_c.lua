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

co = coroutine.wrap(function() return dofile("mod_yield_chunk.lua") end)
print(co()) print(co(21))

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
