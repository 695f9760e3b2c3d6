-- if / elseif / else chains and truthiness.
local function classify(n)
  if n < 0 then
    return "negative"
  elseif n == 0 then
    return "zero"
  elseif n < 10 then
    return "small"
  elseif n < 100 then
    return "medium"
  else
    return "large"
  end
end
for _, n in ipairs({-5, 0, 3, 42, 1000, 9.99, 10}) do
  print(n, classify(n))
end
-- only nil and false are false
local values = {0, "", "false", false, nil, {}, 0.0}
for i = 1, 7 do
  if values[i] then print(i, "truthy") else print(i, "falsy") end
end
-- nested ifs with locals shadowing
local x = 1
if x == 1 then
  local x = 2
  if x == 2 then
    local x = 3
    print("inner", x)
  end
  print("middle", x)
end
print("outer", x)
-- empty branches
if true then elseif false then else end
if false then print("no") end
print("done")
