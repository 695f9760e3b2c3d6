-- Stores under keys the array part does not take (SETTABLE with a key in a register, SETI
-- past the array part), in compiled code and in the interpreter alike: new keys into a
-- growing hash part, stores to live keys, removals, __newindex on absent and dead keys,
-- nil and NaN keys, float keys with integer values; then traversals that clear fields as
-- they go and two traversals of one table interleaved.

local function dump(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) < type(b)
  end)
  local out = {}
  for _, k in ipairs(ks) do out[#out + 1] = tostring(k) .. "=" .. tostring(t[k]) end
  return table.concat(out, " ")
end

-- new string keys in a register, growing the hash part through many rehashes
local t = {}
local names = {}
for i = 1, 2000 do names[i] = "k" .. i end
for i = 1, 2000 do t[names[i]] = i end
local sum = 0
for i = 1, 2000 do sum = sum + t[names[i]] end
print("grown", sum)
-- live keys overwritten, then half removed (nil from a constant and from a register)
for i = 1, 2000 do t[names[i]] = i * 2 end
local none = nil
for i = 1, 2000, 2 do t[names[i]] = nil end
for i = 2, 2000, 4 do t[names[i]] = none end
local n, s = 0, 0
for _, v in pairs(t) do n, s = n + 1, s + v end
print("after removals", n, s)
-- dead keys come back
for i = 1, 2000, 2 do t[names[i]] = -i end
n, s = 0, 0
for _, v in pairs(t) do n, s = n + 1, s + v end
print("dead keys back", n, s)

-- integer keys past the array part, float keys with integer values, SETI past the array
local sp = {}
for i = 1, 500 do sp[i * 1009 + 7] = i end
for i = 1, 500 do sp[(i * 1009 + 7) + 0.0] = sp[i * 1009 + 7] + 1 end
sp[100] = "hundred"
sp[2^53] = "big"
sp[-3] = "neg"
sp[0.5] = "half"
local c = 0
for k, v in pairs(sp) do c = c + 1 end
print("sparse", c, sp[1009 * 250 + 7], sp[100], sp[2^53], sp[-3], sp[0.5])

-- booleans and tables as keys
local kt = {}
local bt = {}
local key_t = {}
bt[true] = 1; bt[false] = 2; bt[key_t] = 3
bt[true] = bt[true] + 10
print("bool keys", bt[true], bt[false], bt[key_t])

-- __newindex: called for absent keys and for dead ones, not for live ones
local log = {}
local mt = {__newindex = function(tt, k, v) log[#log + 1] = tostring(k) .. ":" .. tostring(v); rawset(tt, k, v) end}
local m = setmetatable({}, mt)
local mk = {"a", "b", "c", "a", "b"}
for i = 1, #mk do m[mk[i]] = i end
m[mk[1]] = nil          -- live: raw removal, no __newindex
m[mk[1]] = 100          -- dead now: __newindex again
for i = 1, 3 do m[1000 + i] = i end   -- SETTABLE with integer keys past the array part
print("newindex", table.concat(log, " "))
print("m", dump(m))

-- __newindex as a table
local store = {}
local proxy = setmetatable({}, {__newindex = store})
local pk = {"x", "y"}
for i = 1, 2 do proxy[pk[i]] = i end
print("proxy", rawget(proxy, "x"), store.x, store.y)

-- SETI past the array part with and without a metatable
local si = {}
si[200] = "a"; si[201] = "b"
local sm = setmetatable({}, {__newindex = function(tt, k, v) rawset(tt, k, v .. "!") end})
sm[200] = "a"
sm[200] = "c"
print("seti", si[200], si[201], sm[200])

-- errors: nil and NaN keys, as the interpreter raises them
local bad = {}
local nilkey, nankey = nil, 0 / 0
print(pcall(function() bad[nilkey] = 1 end))
print(pcall(function() bad[nankey] = 1 end))
print(pcall(function() bad[nilkey] = nil end))
local withmt = setmetatable({}, {})
print(pcall(function() withmt[nilkey] = 1 end))
print("bad", next(bad))

-- traversal clearing every field it passes, a big and a small table
for _, size in ipairs({3, 3000}) do
  local tr = {}
  for i = 1, size do tr["f" .. i] = i end
  local seen = 0
  for k in pairs(tr) do tr[k] = nil; seen = seen + 1 end
  print("cleared", size, seen, next(tr))
end

-- two traversals of one table interleaved, and next with keys out of order
local two = {}
for i = 1, 200 do two["e" .. i] = i end
local k1, k2 = next(two), nil
local s1, s2 = 0, 0
repeat
  s1 = s1 + two[k1]
  k2 = next(two, k2)
  if k2 then s2 = s2 + two[k2] end
  k1 = next(two, k1)
until k1 == nil
while k2 ~= nil do k2 = next(two, k2); if k2 then s2 = s2 + two[k2] end end
print("interleaved", s1, s2)
local any = next(two)
print("restart", next(two, any) ~= nil, pcall(next, two, "no such key"))
