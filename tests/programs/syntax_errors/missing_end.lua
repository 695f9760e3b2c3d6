-- A function body that is never closed.
local function f(x)
  if x then
    return 1
  end

print(f(1))
