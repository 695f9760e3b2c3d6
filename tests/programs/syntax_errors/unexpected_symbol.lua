-- An operator where an expression should start.
local t = {}
local v = * 3
print(v)
