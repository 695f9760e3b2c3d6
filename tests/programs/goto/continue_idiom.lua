-- goto as "continue" in all loop kinds.
local odds = {}
for i = 1, 10 do
  if i % 2 == 0 then goto continue end
  odds[#odds + 1] = i
  ::continue::
end
print(table.concat(odds, " "))

local i, seen = 0, {}
while i < 10 do
  i = i + 1
  if i % 3 ~= 0 then goto next end
  seen[#seen + 1] = i
  ::next::
end
print(table.concat(seen, " "))

-- in repeat, the label must come before any local used in until, so use a
-- variable declared outside the loop
local k, acc = 0, {}
repeat
  k = k + 1
  if k == 2 then goto cont end
  acc[#acc + 1] = k
  ::cont::
until k >= 4
print(table.concat(acc, " "))

-- skip words with a goto inside a generic for
local kept = {}
for w in ("apple banana cherry date"):gmatch("%a+") do
  if #w > 5 then goto skip end
  kept[#kept + 1] = w
  ::skip::
end
print(table.concat(kept, ","))

-- a label at the end of a block may be followed by nothing (void statements)
do
  goto done
  print("never")
  ::done:: ;
end
print("end")
