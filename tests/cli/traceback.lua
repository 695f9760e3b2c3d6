local function inner(x)
  return x.field
end
local function outer()
  return inner(nil) + 1
end
outer()
