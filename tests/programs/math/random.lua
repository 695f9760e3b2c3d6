-- math.random: only properties are checked (sequences differ between
-- implementations): ranges, subtypes, determinism after re-seeding.
math.randomseed(42)
local first = {}
for i = 1, 20 do first[i] = math.random(1, 1000000) end
math.randomseed(42)
local same = true
for i = 1, 20 do if math.random(1, 1000000) ~= first[i] then same = false end end
print("same sequence after reseeding", same)

-- different seeds give (almost surely) different sequences
math.randomseed(43)
local diff = false
for i = 1, 20 do if math.random(1, 1000000) ~= first[i] then diff = true end end
print("different seed differs", diff)

-- math.random() is a float in [0, 1)
local okf = true
for _ = 1, 10000 do
  local r = math.random()
  if math.type(r) ~= "float" or r < 0 or r >= 1 then okf = false end
end
print("random() in [0,1)", okf)

-- math.random(m) is an integer in [1, m]; math.random(m, n) in [m, n]
local oki, seen = true, {}
for _ = 1, 10000 do
  local r = math.random(6)
  if math.type(r) ~= "integer" or r < 1 or r > 6 then oki = false end
  seen[r] = true
end
local all = true
for k = 1, 6 do if not seen[k] then all = false end end
print("random(6) in [1,6], all faces seen", oki, all)

local okr = true
for _ = 1, 10000 do
  local r = math.random(-3, 3)
  if r < -3 or r > 3 then okr = false end
end
print("random(-3,3) in range", okr)
print("random(5,5)", math.random(5, 5))
print("full range type", math.type(math.random(math.mininteger, math.maxinteger)))
print("random(0) type", math.type(math.random(0)))
print(pcall(math.random, 2, 1))
print(pcall(math.random, 0.5))
print(pcall(math.random, 1, 2, 3))

-- a rough uniformity check on 60000 draws of a die
math.randomseed(7)
local counts = {0, 0, 0, 0, 0, 0}
for _ = 1, 60000 do local r = math.random(6); counts[r] = counts[r] + 1 end
local okuni = true
for k = 1, 6 do if counts[k] < 9000 or counts[k] > 11000 then okuni = false end end
print("roughly uniform", okuni)
