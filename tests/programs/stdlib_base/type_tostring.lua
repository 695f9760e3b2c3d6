-- type() and tostring() for every basic type.
local values = {nil, true, false, 0, 1.5, "s", {}, print, function() end, coroutine.create(function() end)}
for i = 1, 10 do
  io.write(type(values[i]), " ")
end
print()
print(pcall(type))
print(tostring(nil), tostring(true), tostring(false), tostring(12), tostring(1.25), tostring("s"))
-- addresses differ between runs and implementations: check the shape only
local shapes = {
  table = tostring({}),
  ["function"] = tostring(function() end),
  builtin = tostring(print),
  thread = tostring(coroutine.create(function() end)),
}
for _, k in ipairs({"table", "function", "builtin", "thread"}) do
  print(k, (shapes[k]:gsub("0x%x+", "ADDR")))
end
-- two distinct tables give distinct strings, the same table the same string
local t = {}
print(tostring(t) == tostring(t), tostring({}) ~= tostring({}))
print(pcall(tostring))
-- tostring calls __tostring; print uses tostring
local obj = setmetatable({}, {__tostring = function() return "OBJ" end})
print(obj, tostring(obj), type(obj))
-- type returns strings usable as keys
local counts = {}
for i = 1, 10 do
  local ty = type(values[i])
  counts[ty] = (counts[ty] or 0) + 1
end
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do io.write(k, ":", counts[k], " ") end
print()
