-- repeat without until.
local i = 0
repeat
  i = i + 1
print(i)
