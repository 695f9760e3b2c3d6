-- Generic for: stateless iterators, closures, pairs/ipairs, extra values.
local function range(n)
  local i = 0
  return function()
    i = i + 1
    if i <= n then return i, i * i end
  end
end
for i, sq in range(4) do print(i, sq) end

-- a stateless iterator with explicit state and control variable
local function evens(max, cur)
  cur = cur + 2
  if cur <= max then return cur end
end
for v in evens, 10, 0 do io.write(v, " ") end
print()

-- ipairs stops at the first nil
local arr = {"a", "b", "c", nil, "e"}
for i, v in ipairs(arr) do print(i, v) end

-- pairs over a hash: sort the keys to get a deterministic order
local h = {x = 1, y = 2, z = 3, [1] = "one", [2] = "two"}
local keys = {}
for k in pairs(h) do keys[#keys + 1] = tostring(k) end
table.sort(keys)
print(table.concat(keys, ","))

-- a generic for with a to-be-closed fourth value (Lua 5.4)
local log = {}
do
  local closer = setmetatable({}, {__close = function() log[#log + 1] = "closed" end})
  for i in function(_, c) c = c + 1; if c <= 2 then return c end end, nil, 0, closer do
    log[#log + 1] = "iter" .. i
  end
end
print(table.concat(log, " "))

-- closing when the loop is left with break
log = {}
do
  local closer = setmetatable({}, {__close = function() log[#log + 1] = "closed" end})
  for i in range(10), nil, nil, closer do
    log[#log + 1] = i
    if i == 3 then break end
  end
end
print(table.concat(log, " "))

-- nested generic loops over string.gmatch
for word in ("one two"):gmatch("%a+") do
  for ch in word:gmatch(".") do io.write(ch:upper()) end
  io.write("|")
end
print()
