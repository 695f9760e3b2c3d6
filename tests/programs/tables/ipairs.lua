-- ipairs stops at the first nil and respects __index (5.4).
local t = {1, 2, nil, 4}
local n = 0
for i, v in ipairs(t) do n = i end
print("stopped at", n)
for i, v in ipairs({"a", "b", "c"}) do io.write(i, v, " ") end
print()
for i, v in ipairs({}) do print("never") end
local h = {[2] = "two", [3] = "three"}
local count = 0
for _ in ipairs(h) do count = count + 1 end
print("no [1]", count)
-- __index is honoured by ipairs in 5.4
local proxy = setmetatable({}, {__index = function(_, i) if i <= 4 then return i * 3 end end})
for i, v in ipairs(proxy) do io.write(i, ":", v, " ") end
print()
-- ipairs returns three values
local f, s, init = ipairs({})
print(type(f), type(s), init)
-- modifying the table while iterating (appending) extends the traversal
local grow = {1}
for i, v in ipairs(grow) do
  if i < 5 then grow[i + 1] = v * 2 end
end
print(table.concat(grow, ","))
-- false is a value, not the end
local bools = {true, false, true}
local seen = 0
for _ in ipairs(bools) do seen = seen + 1 end
print("with false", seen)
