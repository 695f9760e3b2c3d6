-- Each loop iteration gets fresh locals; closures made in different
-- iterations do not share them.
local fs = {}
for i = 1, 5 do fs[i] = function() return i end end
local out = {}
for i = 1, 5 do out[i] = fs[i]() end
print(table.concat(out, " "))

-- generic for: both control variables are fresh per iteration
local gs = {}
for k, v in ipairs({"a", "b", "c"}) do
  gs[#gs + 1] = function() return k .. v end
end
print(gs[1](), gs[2](), gs[3]())

-- modifying a captured loop variable affects only that iteration's closure
local hs = {}
for i = 1, 3 do
  hs[i] = {
    get = function() return i end,
    bump = function() i = i + 100 end,
  }
end
hs[2].bump()
print(hs[1].get(), hs[2].get(), hs[3].get())

-- while loop locals
local ws = {}
local n = 0
while n < 3 do
  n = n + 1
  local m = n
  ws[n] = function() return m end
end
print(ws[1](), ws[2](), ws[3]())

-- nested loops
local grid = {}
for i = 1, 2 do
  for j = 1, 2 do
    grid[#grid + 1] = function() return i * 10 + j end
  end
end
for _, f in ipairs(grid) do io.write(f(), " ") end
print()

-- closures over a variable declared before the loop are all the same variable
local shared = 0
local ss = {}
for i = 1, 3 do ss[i] = function() shared = shared + i; return shared end end
print(ss[1](), ss[2](), ss[3]())
