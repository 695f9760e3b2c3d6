-- coroutine.close: suspended and dead coroutines, pending to-be-closed variables.
local log = {}
local co = coroutine.create(function()
  local a <close> = setmetatable({}, {__close = function(_, err) log[#log + 1] = "a closed, err=" .. tostring(err) end})
  local b <close> = setmetatable({}, {__close = function() log[#log + 1] = "b closed" end})
  coroutine.yield("suspended with two pending")
  log[#log + 1] = "never reached"
end)
print(coroutine.resume(co))
print(coroutine.status(co))
print(coroutine.close(co))
print(coroutine.status(co))
print(table.concat(log, "; "))
-- closing a coroutine that never ran, and a dead one
print(coroutine.close(coroutine.create(function() end)))
local done = coroutine.create(function() return 1 end)
coroutine.resume(done)
print(coroutine.close(done))
-- closing a coroutine that died with an error returns false and the error
local failed = coroutine.create(function() error("died", 0) end)
coroutine.resume(failed)
print(coroutine.close(failed))
-- an error raised by a __close during close is returned
local bad = coroutine.create(function()
  local x <close> = setmetatable({}, {__close = function() error("close error", 0) end})
  coroutine.yield()
end)
coroutine.resume(bad)
print(coroutine.close(bad))
-- cannot close a running coroutine
local selfclose = coroutine.create(function() return pcall(coroutine.close, coroutine.running()) end)
print(coroutine.resume(selfclose))
print(pcall(coroutine.close, coroutine.running()))
