local x = 1
if x then
  print(x
end
