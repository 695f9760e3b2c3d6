-- Path profiling fallback: a function with 2^40 acyclic paths (40 independent ifs in
-- a row) cannot be numbered in 32 bits: the runtime cuts it into pieces.
local function wide(x)
  local s = 0
  if x % 2 == 0 then s = s + 1 end
  if x % 3 == 0 then s = s + 2 end
  if x % 4 == 0 then s = s + 3 end
  if x % 5 == 0 then s = s + 4 end
  if x % 6 == 0 then s = s + 5 end
  if x % 7 == 0 then s = s + 6 end
  if x % 8 == 0 then s = s + 7 end
  if x % 9 == 0 then s = s + 8 end
  if x % 10 == 0 then s = s + 9 end
  if x % 11 == 0 then s = s + 10 end
  if x % 12 == 0 then s = s + 11 end
  if x % 13 == 0 then s = s + 12 end
  if x % 14 == 0 then s = s + 13 end
  if x % 15 == 0 then s = s + 14 end
  if x % 16 == 0 then s = s + 15 end
  if x % 17 == 0 then s = s + 16 end
  if x % 18 == 0 then s = s + 17 end
  if x % 19 == 0 then s = s + 18 end
  if x % 20 == 0 then s = s + 19 end
  if x % 21 == 0 then s = s + 20 end
  if x % 22 == 0 then s = s + 21 end
  if x % 23 == 0 then s = s + 22 end
  if x % 24 == 0 then s = s + 23 end
  if x % 25 == 0 then s = s + 24 end
  if x % 26 == 0 then s = s + 25 end
  if x % 27 == 0 then s = s + 26 end
  if x % 28 == 0 then s = s + 27 end
  if x % 29 == 0 then s = s + 28 end
  if x % 30 == 0 then s = s + 29 end
  if x % 31 == 0 then s = s + 30 end
  if x % 32 == 0 then s = s + 31 end
  if x % 33 == 0 then s = s + 32 end
  if x % 34 == 0 then s = s + 33 end
  if x % 35 == 0 then s = s + 34 end
  if x % 36 == 0 then s = s + 35 end
  if x % 37 == 0 then s = s + 36 end
  if x % 38 == 0 then s = s + 37 end
  if x % 39 == 0 then s = s + 38 end
  if x % 40 == 0 then s = s + 39 end
  if x % 41 == 0 then s = s + 40 end
  return s
end
local t = 0
for x = 1, 500 do t = t + wide(x) end
print(t)
