-- if without then.
local x = 5
if x > 3
  print("big")
end
