-- Path profiling: nested loops, break, goto, while and repeat, early returns.
local function nested(n)
  local s = 0
  for i = 1, n do
    for j = 1, i do
      if (i + j) % 2 == 0 then
        s = s + j
      elseif j > 3 then
        break
      end
    end
  end
  return s
end

local function whiles(n)
  local i, c = 0, 0
  while i < n do
    i = i + 1
    if i % 4 == 1 then goto continue end
    c = c + i
    ::continue::
  end
  repeat
    c = c - 1
    i = i - 2
  until i <= 0 or c < 10
  return c
end

local function early(x)
  if x < 0 then return "neg" end
  if x == 0 then return "zero" end
  for k = 1, x do
    if k * k > x then return k end
  end
  return "big"
end

local function collatz(n)
  local steps = 0
  while n ~= 1 do
    if n % 2 == 0 then n = n // 2 else n = 3 * n + 1 end
    steps = steps + 1
  end
  return steps
end

local function backgoto(n)
  local i = 0
  ::top::
  i = i + 1
  if i < n then goto top end
  return i
end

print(nested(12), whiles(30))
for x = -2, 20 do io.write(tostring(early(x)), " ") end
print()
local t = 0
for n = 1, 60 do t = t + collatz(n) end
print(t, backgoto(7))
