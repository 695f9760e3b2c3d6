-- Raises an uncaught error after f has been entered 10 times: the profile must still be
-- written whole, and the exit status is 1.
local function f(x) return x end
for i = 1, 10 do f(i) end
error("boom")
