-- select with counts, positive and negative indexes, and varargs with nils.
local function count(...) return select("#", ...) end
print(count(), count(nil), count(nil, nil), count(1, nil, 3, nil))
print(select(1, "a", "b", "c"))
print(select(2, "a", "b", "c"))
print(select(3, "a", "b", "c"))
print(select(4, "a", "b", "c"))
print(select(-1, "a", "b", "c"))
print(select(-2, "a", "b", "c"))
print(select(-3, "a", "b", "c"))
print(pcall(select, -4, "a", "b", "c"))
print(pcall(select, 0, "a"))
print(select(2.0, "x", "y"))
print(select("#"))
-- iterate over varargs with nils
local function show(...)
  local parts = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    parts[#parts + 1] = tostring(v)
  end
  return table.concat(parts, ",")
end
print(show(1, nil, "x", nil))
-- ... in the main chunk holds the script arguments (none here)
print("main chunk varargs", select("#", ...))
-- ... inside nested functions refers to the innermost vararg function
local function outer(...)
  local function inner(...) return select("#", ...) end
  return inner(1), select("#", ...)
end
print(outer(1, 2, 3))
-- last(...) in the middle of an expression list is truncated
local function last(...) return select(-1, ...) end
print(last(1, 2, 3), last("only"))
