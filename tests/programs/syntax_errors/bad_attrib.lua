-- An unknown local attribute.
local x <readonly> = 1
