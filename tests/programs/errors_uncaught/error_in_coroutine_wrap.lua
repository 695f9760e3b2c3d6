-- An error inside a coroutine.wrap body propagates out uncaught.
local gen = coroutine.wrap(function()
  coroutine.yield(1)
  error("generator broke")
end)
print(gen())
print(gen())
