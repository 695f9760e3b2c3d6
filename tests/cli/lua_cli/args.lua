-- prints the arg table (every index, the negative ones too) and the script's arguments
local lo = 0
while arg[lo - 1] ~= nil do lo = lo - 1 end
for i = lo, #arg do print(i, arg[i]) end
print("...", select("#", ...), ...)
