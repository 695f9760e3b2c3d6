-- break with no enclosing loop.
local x = 1
if x then
  break
end
