-- debug.getlocal and debug.setlocal: locals by index at a level, the extra arguments of a
-- vararg function by negative index ("(vararg)"), other slots as "(temporary)" and
-- "(C temporary)", parameter names of a function value, another coroutine's frames, and
-- the errors lua5.4 gives.
local function dump(level)
  local t = {}
  local i = 1
  while true do
    local name, value = debug.getlocal(level + 1, i)
    if not name then break end
    if name:sub(1, 1) ~= "(" then t[#t + 1] = i .. ":" .. name .. "=" .. tostring(value) end
    i = i + 1
  end
  i = -1
  while true do
    local name, value = debug.getlocal(level + 1, i)
    if not name then break end
    t[#t + 1] = i .. ":" .. name .. "=" .. tostring(value)
    i = i - 1
  end
  print(table.concat(t, " "))
end

local function f(a, b, ...)
  local c = a + b
  do
    local inner = "in"
    dump(1)
  end
  dump(1)
  print(debug.setlocal(1, 3, 100), c)
  print(debug.setlocal(1, -2, "VA"), ...)
  print(debug.setlocal(1, 99, 1), debug.setlocal(1, -5, 1))
  return c
end
print(f(1, 2, "v1", "v2"))
f(3, 4)

-- a function value: its parameter names only
local function g(x, y, ...) local z end
print(debug.getlocal(g, 1), debug.getlocal(g, 2), debug.getlocal(g, 3), debug.getlocal(g, 0))
print(debug.getlocal(print, 1))

-- temporaries: slots of the frame beyond its named locals; a C function's slots
local function temps()
  local a = 1
  local n1, v1 = debug.getlocal(1, 1)
  local n2, v2 = debug.getlocal(1, 2)
  print(n1, v1, n2, type(v2))
end
temps()
print(select("#", pcall(debug.getlocal, 2, 1)), (pcall(debug.getlocal, 2, 1)))

-- setlocal on a caller's variable, seen when it goes on
local function setter() debug.setlocal(2, 1, "changed") end
local function victim()
  local v = "original"
  setter()
  return v
end
print(victim())

-- another coroutine's frames
local co = coroutine.create(function(p, ...)
  local q = p * 2
  coroutine.yield()
  return q
end)
coroutine.resume(co, 21, "extra")
print(debug.getlocal(co, 1, 1), debug.getlocal(co, 1, 2), debug.getlocal(co, 1, -1))
print(debug.setlocal(co, 1, 2, 5))
print(coroutine.resume(co))
print(pcall(debug.getlocal, co, 5, 1))

-- errors
print(pcall(debug.getlocal, 50, 1))
print(pcall(debug.setlocal, 50, 1, 1))
print(pcall(debug.setlocal, 1, 1))
print(pcall(debug.getlocal, 1))
print(pcall(debug.getlocal, {}, 1))
print(pcall(debug.getlocal, 1, "x"))
