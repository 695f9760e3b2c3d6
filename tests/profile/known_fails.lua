-- Fails with an uncaught error raised three frames deep (run_known_profiles.py): the
-- profile is still written whole. main;h;g;f: g(1), g(2), g(3) call f 1 + 2 + 3 times, then
-- g(3) raises.
local function f(x) return x end
local function g(n)
  for i = 1, n do f(i) end
  if n == 3 then error("boom") end
end
local function h() for n = 1, 5 do g(n) end end
h()
