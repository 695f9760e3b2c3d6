-- Calling an undefined global function deep in a call chain.
local function level3() return undefined_function(1) end
local function level2() return level3() + 1 end
local function level1() return level2() * 2 end
print("calling")
level1()
