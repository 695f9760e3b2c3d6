-- A string literal that runs to the end of the line.
local s = "abc
print(s)
