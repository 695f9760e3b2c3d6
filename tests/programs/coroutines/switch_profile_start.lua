-- Coroutine calls from compiled code while the profile library starts and stops (Tandem's
-- `profile`; lua5.4 has none, and runs the same coroutines without it): code compiled
-- before the first profile.start has no sampling ticks, and its calls of resume, yield and
-- wrap functions give the frame back to the interpreter once sampling is on (as jit_call
-- does for other calls). The output is the coroutines' alone.
local ok, profile = pcall(require, "profile")
if not ok then profile = nil end

local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local function pingpong(n)
  local co = coroutine.create(function(x) while true do x = coroutine.yield(x * 2) end end)
  local s = 0
  for i = 1, n do local _, v = coroutine.resume(co, i) s = s + v end
  return s
end
local function consume(n)
  local s = 0
  for v in gen(n) do s = s + v end
  local g = gen(n)
  for _ = 1, n do s = s + g() end
  return s
end

-- compiled and run before any start
print(pingpong(100), consume(100))
if profile then profile.start{"methodcount"} end
print(pingpong(200), consume(200))
if profile then profile.stop() end
print(pingpong(300), consume(300))
if profile then profile.start{"methodcount"} end
print(pingpong(400), consume(400))
if profile then profile.stop() end
print(pingpong(50), consume(50))
