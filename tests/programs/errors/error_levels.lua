-- error() with levels 0, 1, 2 and 3: which position is prepended.
local function level(n)
  error("at level " .. n, n)
end
local function caller(n)
  level(n)   -- line 6
end
local function outer(n)
  caller(n)  -- line 9
end
print(pcall(outer, 0))
print(pcall(outer, 1))
print(pcall(outer, 2))
print(pcall(outer, 3))
-- default level is 1
print(pcall(function() error("default") end))
-- a checker that blames its caller, the usual idiom
local function check_positive(x)
  if type(x) ~= "number" or x <= 0 then
    error("expected a positive number, got " .. tostring(x), 2)
  end
  return x
end
local function use() local v = check_positive(-1); return v end  -- line 24
print(pcall(use))
-- through a tail call the caller's frame is gone: no position is added
local function use_tail() return check_positive(-2) end
print(pcall(use_tail))
-- level pointing to a C function (pcall) gives no position
print(pcall(error, "from C", 2))
-- error in the main chunk level (called directly by pcall from here)
print(pcall(error, "no position", 0))
-- error with a number message gets a position too (it is converted)
print(pcall(function() error(42) end))
print(pcall(function() error(42, 0) end))
