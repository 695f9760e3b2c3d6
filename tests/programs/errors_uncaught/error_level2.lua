-- error with level 2 blames the caller's line.
local function check(x)
  if not x then error("check failed", 2) end
end
check(true)
print("first check passed")
check(false)
