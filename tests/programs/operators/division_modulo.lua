-- Floor division and modulo: signs, subtypes, division by zero.
local function show(label, v)
  print(label, v, math.type(v))
end
show("7//2", 7 // 2)
show("-7//2", -7 // 2)
show("7//-2", 7 // -2)
show("-7//-2", -7 // -2)
show("7.0//2", 7.0 // 2)
show("-7.5//2", -7.5 // 2)
show("7%3", 7 % 3)
show("-7%3", -7 % 3)
show("7%-3", 7 % -3)
show("-7%-3", -7 % -3)
show("5.5%2", 5.5 % 2)
show("-5.5%2", -5.5 % 2)
show("5.5%-2", 5.5 % -2)
show("5%2.5", 5 % 2.5)
show("1//0.0", 1 // 0.0)
show("-1//0.0", -1 // 0.0)
show("0/0.0 is nan", (0 // 0.0) ~= (0 // 0.0))
show("1%0.0 is nan", (1 % 0.0) ~= (1 % 0.0))
show("1.0%math.huge", 1.0 % math.huge)
show("-1.0%math.huge", -1.0 % math.huge)
show("1/0 (int operands)", 1 / 0)
show("minint//-1", math.mininteger // -1)
show("minint%-1", math.mininteger % -1)
show("3 % -math.huge", 3 % -math.huge)

local ok, err = pcall(function() return 1 // 0 end)
print("1//0", ok, err)
ok, err = pcall(function() return 1 % 0 end)
print("1%0", ok, err)
local zero = 0
ok, err = pcall(function() return 10 // zero end)
print("10//zero", ok, err)
ok, err = pcall(function() return 10 % zero end)
print("10%zero", ok, err)

-- identity a == (a // b) * b + a % b
local bad = 0
for a = -20, 20 do
  for b = -7, 7 do
    if b ~= 0 then
      if (a // b) * b + a % b ~= a then bad = bad + 1 end
      if a % b ~= 0 and (a % b < 0) ~= (b < 0) then bad = bad + 1 end
    end
  end
end
print("identity violations", bad)
