-- Yields from inside metamethods: __index, __lt, __add, __concat, __eq,
-- __newindex, __call, __len, __close.
local function yielding(name)
  return function(...)
    local r = coroutine.yield(name)
    return r
  end
end
local mt = {
  __index = function(t, k) return coroutine.yield("index " .. k) end,
  __newindex = function(t, k, v) rawset(t, k, coroutine.yield("newindex " .. k) or v) end,
  __lt = function(a, b) return coroutine.yield("lt") end,
  __le = function(a, b) return coroutine.yield("le") end,
  __eq = function(a, b) return coroutine.yield("eq") end,
  __add = function(a, b) return coroutine.yield("add") end,
  __concat = function(a, b) return coroutine.yield("concat") end,
  __call = function(self, x) return coroutine.yield("call " .. x) end,
  __len = function() return coroutine.yield("len") end,
  __unm = yielding("unm"),
}
local a, b = setmetatable({}, mt), setmetatable({}, mt)
local co = coroutine.wrap(function()
  local r = {}
  r[#r + 1] = a.key
  a.fresh = "orig"
  r[#r + 1] = a.fresh
  r[#r + 1] = tostring(a < b)
  r[#r + 1] = tostring(a <= b)
  r[#r + 1] = tostring(a == b)
  r[#r + 1] = a + 1
  r[#r + 1] = a .. "x"
  r[#r + 1] = a(5)
  r[#r + 1] = #a
  r[#r + 1] = -a
  if a < b then r[#r + 1] = "branch taken" end
  return "results: " .. table.concat(r, ",")
end)
print(co())            -- index key
print(co("v1"))        -- newindex fresh
print(co("stored"))    -- lt
print(co(true))        -- le
print(co(false))       -- eq
print(co(1))           -- add
print(co("sum"))       -- concat
print(co("cat"))       -- call 5
print(co("called"))    -- len
print(co(3))           -- unm
print(co("neg"))       -- lt (in the if)
print(co(true))

-- a __close that yields (5.4 allows it)
local c2 = coroutine.wrap(function()
  do
    local x <close> = setmetatable({}, {__close = function() coroutine.yield("closing") end})
  end
  return "after close"
end)
print(c2(), c2())

-- an __index that yields, used in a loop summing values
local lazy = setmetatable({}, {__index = function(_, i) return coroutine.yield(i) end})
local summer = coroutine.wrap(function()
  local s = 0
  for i = 1, 5 do s = s + lazy[i] end
  return "sum " .. s
end)
local req = summer()
while type(req) == "number" do req = summer(req * req) end
print(req)
