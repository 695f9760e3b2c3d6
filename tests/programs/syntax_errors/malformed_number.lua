-- A number immediately followed by letters.
local n = 3x
print(n)
