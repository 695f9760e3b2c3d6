-- Assigning to a <const> local.
local limit <const> = 10
local y = limit + 1
limit = y
