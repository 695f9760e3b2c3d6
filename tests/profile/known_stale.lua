-- A call through pcall after a Lua call at pcall's depth has returned (run_known_profiles.py):
-- g returns with no event, so the analyzer's shadow stack still holds g at depth 2 when f
-- arrives at depth 3 from pcall (a C frame at depth 2). f's caller is the main chunk.
local function f(x) return x end
local function g() return 1 end
g()
for i = 1, 3 do pcall(f, i) end
