-- debug.sethook line events, as lua5.4 gives them: a new line, or a jump back (even to the
-- same line: a one-line loop reports its line on every iteration); the first instruction
-- of every function; a return into the caller on the call's line gives no event.
local lines = {}
local function record(event, line)
  assert(event == "line")
  lines[#lines + 1] = line
end
local function flush(title)
  print(title, table.concat(lines, " "))
  lines = {}
end

local function numeric_for(n)
  local s = 0
  for i = 1, n do
    s = s + i
  end
  return s
end

local function same_line_loop() local s = 0 for i = 1, 3 do s = s + i end return s end

local function while_repeat()
  local i = 0
  while i < 3 do
    i = i + 1
  end
  repeat
    i = i - 1
  until i == 0
  return i
end

local function generic_for(t)
  local n = 0
  for k, v in ipairs(t) do
    n = n + v
  end
  for k in pairs({a = 1}) do n = n + 1 end
  return n
end

local function branches(x)
  if x > 2 then
    return "big"
  elseif x > 1 then
    return "medium"
  else
    return "small"
  end
end

local function with_goto()
  local i = 0
  ::top::
  i = i + 1
  if i < 3 then goto top end
  return i
end

local function caller()
  local a = numeric_for(2) local b = numeric_for(1)
  return a +
    b
end

-- each case traced alone: the events of traced's own lines come first and last
local function traced(title, f, ...)
  debug.sethook(record, "l")
  f(...)
  debug.sethook()
  flush(title)
end
traced("numeric for", numeric_for, 3)
traced("same line", same_line_loop)
traced("while/repeat", while_repeat)
traced("generic for", generic_for, {10, 20})
traced("branches", function() branches(3) branches(2) branches(0) end)
traced("goto", with_goto)
traced("calls", caller)

-- a hook set inside a function goes on in its callers
local function set_inside()
  debug.sethook(record, "l")
  local x = 1
end
set_inside()
local y = 2
debug.sethook()
flush("set inside")

-- the hook sees the hooked function at level 2, with its current line and source
local seen = {}
debug.sethook(function(e, l)
  local info = debug.getinfo(2, "Sl")
  seen[#seen + 1] = info.short_src .. ":" .. info.currentline .. "=" .. l
end, "l")
numeric_for(1)
debug.sethook()
print(table.concat(seen, " "))

-- dofile'd and load'ed chunks report their own lines
debug.sethook(record, "l")
load("local a = 1\nlocal b = 2\n\nreturn a + b", "=chunk")()
debug.sethook()
flush("loaded chunk")
