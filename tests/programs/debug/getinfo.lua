-- debug.getinfo: each option alone ('S', 'l', 'u', 'n', 'r', 't', 'L', 'f'), the default
-- set, functions given by value or by level, a coroutine's levels, and the invalid options.
local function keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, ",")
end

local function sample(a, b, ...)
  return debug.getinfo(1)
end
local info = sample()
print(keys(info))
print(info.short_src, info.source, info.what, info.linedefined, info.lastlinedefined, info.currentline)
print(info.nups, info.nparams, info.isvararg, info.name, info.namewhat, info.istailcall)
print(info.ftransfer, info.ntransfer, info.func == sample)

for _, opt in ipairs({"S", "l", "u", "n", "r", "t", "L", "f", "", "Sl", "nSltufrL"}) do
  print(opt, keys(debug.getinfo(1, opt)))
end

-- by value: no current line, no name; C functions
local byval = debug.getinfo(sample, "Slnut")
print(byval.currentline, byval.namewhat, byval.name, byval.istailcall, byval.nparams, byval.isvararg)
local c = debug.getinfo(print)
print(c.what, c.source, c.short_src, c.linedefined, c.currentline, c.nups, c.nparams, c.isvararg,
      c.activelines)
print(debug.getinfo(print, "L").activelines, keys(debug.getinfo(print, "L")))

-- the main chunk, the caller
local m = debug.getinfo(1, "S")
print(m.what, m.linedefined, m.short_src)
local function who() return debug.getinfo(2, "n").name, debug.getinfo(1, "n").name end
print(who())

-- active lines: the lines with code
local function lines(f)
  local ls = {}
  for l in pairs(debug.getinfo(f, "L").activelines) do ls[#ls + 1] = l end
  table.sort(ls)
  return table.concat(ls, " ")
end
local function body(x)
  local y = x

  if y then
    y = y + 1
  end
  return y
end
print(lines(body), lines(sample), lines(function() end))

-- tail calls, and 't' for a frame reached through one
local function tailee() return debug.getinfo(1, "t").istailcall, debug.getinfo(1, "n").namewhat end
local function tailer() return tailee() end
print(tailer())

-- a coroutine's levels
local co = coroutine.create(function(x)
  local function inner() coroutine.yield() end
  inner()
end)
coroutine.resume(co)
for level = 0, 3 do
  local i = debug.getinfo(co, level, "Sln")
  print(level, i and i.what, i and i.currentline, i and i.name, i and i.namewhat)
end
print(debug.getinfo(co, 1, "f").func ~= nil)

-- invalid options and arguments
print(pcall(debug.getinfo, 1, "x"))
print(pcall(debug.getinfo, 1, "Sx"))
print(pcall(debug.getinfo, 1, ">S"))
print(pcall(debug.getinfo, print, ">"))
print(pcall(debug.getinfo, co, 0, "?"))
print(pcall(debug.getinfo, {}))
print(pcall(debug.getinfo))
print(debug.getinfo(100, "x"), debug.getinfo(-1), debug.getinfo(co, 10))
