-- %s with widths/precisions, and tostring conversion of arguments.
local f = string.format
print(f("[%s] [%10s] [%-10s] [%.3s] [%10.2s]", "hello", "right", "left", "truncate", "ab cd"))
print(f("%s %s %s %s", 1, 1.5, true, nil))
print(f("%s", setmetatable({}, {__tostring = function() return "custom" end})))
print(f("%5s|%-5s|", 1, 2.0))
print(f("%s", "embedded\0zero"):len())
print(f("no conversions"), f(""), f("%%"))
print(pcall(f, "%s"))
print(pcall(f))
print(f("%s and %s", "a", "b", "extra ignored"))
-- build a table report
local rows = {{"apple", 3, 1.25}, {"banana", 12, 0.5}, {"cherry", 150, 10}}
print(f("%-10s %5s %8s", "item", "qty", "price"))
for _, r in ipairs(rows) do
  print(f("%-10s %5d %8.2f", r[1], r[2], r[3]))
end
local total = 0
for _, r in ipairs(rows) do total = total + r[2] * r[3] end
print(f("%-10s %14.2f", "total", total))
-- long strings through %s (no width limit)
print(#f("%s", ("x"):rep(10000)))
print(#f("%-99s|", "x"))
-- widths and precisions have at most two digits
print(pcall(f, "%-300s|", "x"))
print(pcall(f, "%.100s", "x"))
