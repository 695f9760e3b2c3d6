-- A keyword where a name is required.
local function f()
end
local end = 5
