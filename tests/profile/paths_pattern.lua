-- A loop whose branch takes a known pattern: every third iteration goes to "then".
local function f(n)
  local a, b = 0, 0
  for i = 1, n do
    if i % 3 == 0 then
      a = a + 1
    else
      b = b + 1
    end
  end
  return a * 100 + b
end
print(f(30))
