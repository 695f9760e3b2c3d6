-- while and repeat loops; the until condition sees the body's locals.
local i, total = 1, 0
while i <= 100 do
  total = total + i
  i = i + 1
end
print("while sum", total, i)

local n = 0
while true do
  n = n + 1
  if n >= 5 then break end
end
print("while-true break", n)

-- repeat: a local declared in the body is visible in until
local count = 0
repeat
  local done = count >= 3
  count = count + 1
until done
print("repeat count", count)

-- repeat runs at least once
local runs = 0
repeat runs = runs + 1 until true
print("runs", runs)

-- collatz lengths
local function collatz(k)
  local steps = 0
  while k ~= 1 do
    if k % 2 == 0 then k = k // 2 else k = 3 * k + 1 end
    steps = steps + 1
  end
  return steps
end
local best, bestn = 0, 0
for k = 1, 1000 do
  local s = collatz(k)
  if s > best then best, bestn = s, k end
end
print("collatz", bestn, best)

-- closures created in repeat bodies capture that iteration's local
local fns = {}
local j = 0
repeat
  j = j + 1
  local captured = j * 10
  fns[#fns + 1] = function() return captured end
until captured >= 30
print(fns[1](), fns[2](), fns[3]())
-- while with a complex condition
local a, b = 0, 10
while a < b and not (a == 3 and b == 7) do a, b = a + 1, b - 1 end
print(a, b)
