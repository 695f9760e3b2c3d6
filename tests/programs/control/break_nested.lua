-- break leaves only the innermost loop, in all loop kinds.
local out = {}
for i = 1, 3 do
  for j = 1, 3 do
    if j == 2 then break end
    out[#out + 1] = i .. ":" .. j
  end
end
print(table.concat(out, " "))

local n = 0
while true do
  n = n + 1
  repeat
    n = n + 10
    break
  until false
  if n > 30 then break end
end
print(n)

-- break inside a nested block inside the loop
local found
for i = 1, 100 do
  do
    if i * i > 50 then
      found = i
      break
    end
  end
end
print("first square over 50", found)

-- break in a loop whose body created closures
local fns = {}
for i = 1, 10 do
  local v = i
  fns[i] = function() return v end
  if i == 4 then break end
end
print(#fns, fns[1](), fns[4]())

-- search in a 2-D table with a flag
local grid = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
local fi, fj
for i = 1, #grid do
  for j = 1, #grid[i] do
    if grid[i][j] == 6 then fi, fj = i, j break end
  end
  if fi then break end
end
print("found 6 at", fi, fj)
