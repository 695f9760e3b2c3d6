-- debug.sethook count events: every N instructions (instructions as lua5.4 counts them:
-- a numeric loop's body and FORLOOP, a generic loop's TFORCALL and TFORLOOP as one, an
-- arithmetic metamethod's MMBIN), alone or with line events; a count hook that raises stops
-- a runaway loop.
local function body(n)
  local s = 0
  for i = 1, n do
    s = s + i * 2
  end
  return s
end

local count = 0
debug.sethook(function(e) count = count + 1 end, "", 1)
body(10)
debug.sethook()
print("every instruction", count)

count = 0
debug.sethook(function(e) count = count + 1 end, "", 3)
body(100)
debug.sethook()
print("every third", count)

-- with line events: a count event before the line event of the same instruction
local events = {}
debug.sethook(function(e, l) events[#events + 1] = e:sub(1, 1) .. (l or "") end, "l", 4)
body(2)
debug.sethook()
print(table.concat(events, " "))

-- generic for and a metamethod's MMBIN
local mt = {__add = function(a, b) return 0 end}
local obj = setmetatable({}, mt)
local function generic()
  local n = 0
  for _, v in ipairs({1, 2, 3}) do n = n + v end
  local x = obj + 1
  return n
end
count = 0
debug.sethook(function() count = count + 1 end, "", 1)
generic()
debug.sethook()
print("generic for and __add", count)

-- where the count event lands: the hooked function's line
local where = {}
debug.sethook(function() where[#where + 1] = debug.getinfo(2, "l").currentline end, "", 5)
body(3)
debug.sethook()
print(table.concat(where, " "))

-- a watchdog: the hook raises after 1000 instructions of an endless loop
local ok, err = pcall(function()
  local budget = 0
  debug.sethook(function()
    budget = budget + 1
    if budget >= 10 then
      debug.sethook()
      error("instruction budget exhausted", 2)
    end
  end, "", 100)
  local i = 0
  while true do i = i + 1 end
end)
print(ok, (err:gsub("^.-:%d+: ", "")))
print(debug.gethook())
