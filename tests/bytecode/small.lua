-- A small valid program for the malformed-bytecode tests (run_bad_bytecode.py): it touches
-- most kinds of instruction (constants, tables, loops, closures, varargs, methods,
-- arithmetic, comparisons) and finishes quickly.
local t = {3, 1, 2, n = "x"}
local sum = 0
for i = 1, #t do sum = sum + t[i] * 2 end
for _, v in pairs({a = 1}) do sum = sum + v end
local function f(a, ...)
  local n = select("#", ...)
  return a .. n, ...
end
local obj = {v = 10}
function obj:get(d) return self.v + d end
local s = 0
while s < 5 do s = s + 1 end
repeat s = s - 2 until s < 0
local up = 0
local function inc() up = up + 1 return up end
inc()
print(sum, f("a", 1, 2), obj:get(1.5), s, inc(), t.n, 7 // 2, 2 ^ 3, 5 % 3, 1 < 2, not nil, -sum, ~5, 3 & 1 | 4)
