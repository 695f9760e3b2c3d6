-- Hooks set while compiled code runs (the JIT is on by default): a hot loop turns a line
-- hook on from inside, through a C call and through a function it calls, and the events
-- carry on in the loop's frame and its callers; a coroutine suspended in a compiled loop
-- gets a count hook from outside. With -Xjit=off the same events come from the interpreter.
local events = {}
local function record(e, l) events[#events + 1] = l or e end

local function work(n)
  local s = 0
  for i = 1, n do
    s = s + i
    if i == 500 then debug.sethook(record, "l") end
    if i == 502 then debug.sethook() end
  end
  return s
end
print(work(600), table.concat(events, " "))
events = {}

local function turn_on() debug.sethook(record, "l") end
local function hot(n)
  local s = 0
  for i = 1, n do
    s = s + i
    if i == n then turn_on() end
  end
  s = s + 1
  return s
end
print(hot(1000), hot(2), table.concat(events, " "))
debug.sethook()
events = {}

local co = coroutine.create(function()
  local s = 0
  for i = 1, 1e9 do
    s = s + i
    if i % 1000 == 0 then coroutine.yield(i) end
  end
end)
print(coroutine.resume(co))
local n = 0
debug.sethook(co, function() n = n + 1 end, "", 1)
print(coroutine.resume(co))
print(n > 0, n)
debug.sethook(co)
print(coroutine.resume(co))
