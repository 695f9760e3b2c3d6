-- A call whose argument list is never closed.
local function f(...) return ... end
print(f(1, 2
local z = 3
