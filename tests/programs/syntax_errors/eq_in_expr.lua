-- "=" used where "==" was meant.
local a = 1
if a = 1 then print(a) end
