-- A known call graph (run_known_profiles.py, callgraph and calltree): edges caller -> callee
-- with their counts and call sites.
local function f(x) return x end
local function g() return 2 end
local function h(n)
  g()                          -- first call site of h -> g: 5 calls (once per h)
  for i = 1, n do g() end      -- second call site: 1 + 2 + 3 + 4 + 5 = 15 calls
end
-- Through pcall (a C frame between main chunk and f): the edge main chunk -> f, site "C".
-- First, so that no Lua frame that already returned sits at pcall's depth.
for i = 1, 4 do pcall(f, i) end
for i = 1, 5 do h(i) end       -- main chunk -> h: 5 calls from one site
