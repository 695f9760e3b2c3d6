-- next and pairs over array and hash parts, with deterministic printing.
local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) < type(b)
  end)
  return keys
end
local t = {10, 20, 30, x = "a", y = "b", [100] = "c", [-1] = "d", [2.5] = "e"}
for _, k in ipairs(sorted_keys(t)) do print(k, t[k]) end
print(next({}))
local k, v = next({"only"})
print(k, v)
print(next({"only"}, 1))
print(pcall(next, {}, "missing"))
-- counting entries with pairs
local n = 0
for _ in pairs(t) do n = n + 1 end
print("entries", n)
-- clearing fields during traversal is allowed
local c = {}
for i = 1, 50 do c["k" .. i] = i end
for key in pairs(c) do c[key] = nil end
print("after clear", next(c))
-- modifying existing fields during traversal
local m = {a = 1, b = 2, c = 3}
for key, val in pairs(m) do m[key] = val * 10 end
print(m.a, m.b, m.c)
-- __pairs metamethod
local proxy = setmetatable({}, {__pairs = function(self)
  local i = 0
  return function() i = i + 1; if i <= 3 then return i, i * i end end, self, nil
end})
for key, val in pairs(proxy) do io.write(key, "=", val, " ") end
print()
-- sum over a big hash
local h, sum = {}, 0
for i = 1, 1000 do h["key" .. i] = i end
for _, val in pairs(h) do sum = sum + val end
print("hash sum", sum)
