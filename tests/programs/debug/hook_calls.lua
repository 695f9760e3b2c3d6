-- debug.sethook call, return and tail call events: Lua and C functions, metamethods and
-- iterators named as lua5.4 names them, the values transferred (getinfo's 'r' and getlocal
-- on them), no hooks inside a hook, gethook.
local out = {}
local function hook(event, line)
  local info = debug.getinfo(2, "nSlt")
  out[#out + 1] = string.format("%-9s %-12s %-10s %s:%d%s", event, tostring(info.name), info.namewhat,
    info.short_src, info.currentline, info.istailcall and " (tail)" or "")
end
local function flush(title)
  print("-- " .. title)
  for _, l in ipairs(out) do print(l) end
  out = {}
end

local function leaf(x) return x * 2 end
local function tail(x) return leaf(x + 1) end
local function mid(x)
  local y = tail(x)
  return y + 1
end

debug.sethook(hook, "cr")
local r = mid(3)
debug.sethook()
flush("Lua calls, a tail call " .. r)

debug.sethook(hook, "c")
print("printed")
local s = string.rep("ab", 2)
debug.sethook()
flush("C functions " .. s)

local mt = {
  __add = function(a, b) return 7 end,
  __index = function(t, k) return k .. "!" end,
  __len = function() return 3 end,
  __call = function(self, x) return x end,
}
local obj = setmetatable({}, mt)
debug.sethook(hook, "cr")
local v = obj + 1
local w = obj.field
local n = #obj
local c = obj(5)
debug.sethook()
flush("metamethods " .. v .. " " .. w .. " " .. n .. " " .. c)

debug.sethook(hook, "cr")
for k, x in pairs({a = 1}) do end
for i, x in ipairs({1}) do end
local function iter(s, i) if i < 1 then return i + 1 end end
for i in iter, nil, 0 do end
debug.sethook()
flush("iterators")

-- the values a call or a return transfers: getinfo 'r' and getlocal at those indexes
local transfers = {}
local function thook(event)
  local info = debug.getinfo(2, "nr")
  if info.name ~= "values" then return end
  local vals = {}
  for i = info.ftransfer, info.ftransfer + info.ntransfer - 1 do
    local name, val = debug.getlocal(2, i)
    vals[#vals + 1] = name .. "=" .. tostring(val)
  end
  transfers[#transfers + 1] = event .. " " .. info.ntransfer .. ": " .. table.concat(vals, ", ")
end
local function values(a, b)
  local c = a + b
  return c, a * b, "s"
end
debug.sethook(thook, "cr")
values(2, 5)
debug.sethook()
print(table.concat(transfers, "\n"))
print(debug.getinfo(1, "r").ftransfer, debug.getinfo(1, "r").ntransfer)

-- hooks do not run inside a hook, and a hook function's own calls are not reported
local depth, max = 0, 0
debug.sethook(function()
  depth = depth + 1
  if depth > max then max = depth end
  local s = tostring(depth) .. string.rep("x", 1)
  depth = depth - 1
end, "crl")
local z = leaf(1)
debug.sethook()
print("max nesting", max)

-- a hook function is named "hook '?'"
debug.sethook(function()
  local info = debug.getinfo(1, "n")
  out[#out + 1] = tostring(info.namewhat) .. " " .. tostring(info.name)
  debug.sethook()
end, "l")
local q = 1
flush("hook's own name")

-- gethook: the function, the mask in "crl" order and the count; nil when off
print(debug.gethook())
debug.sethook(hook, "rlc", 0)
local f, m, k = debug.gethook()
debug.sethook()
print(f == hook, m, k)
debug.sethook(hook, "", 10)
f, m, k = debug.gethook()
debug.sethook()
print(f == hook, m == "", k)
debug.sethook(hook, "")
print(debug.gethook())
print(pcall(debug.sethook, hook))
print(pcall(debug.sethook, 1, "l"))
print(pcall(debug.sethook, hook, "l", "x"))

-- an error in a hook goes to the enclosing pcall, and hooks work again after it
local function failing()
  local a = 1
end
debug.sethook(function(e, line)
  if debug.getinfo(2, "f").func == failing then error("from hook at " .. line) end
end, "l")
local ok, err = pcall(failing)
debug.sethook()
print(ok, err)
debug.sethook(hook, "c")
leaf(0)
debug.sethook()
flush("after an error in a hook")
