-- A program of known shape for the profile tests (run_profile_tests.py checks the counts):
-- f is entered exactly 1000 times, g 250, h 10, k 100000, from loops, recursion, tail calls,
-- calls from C (pcall, metamethods) and a coroutine.
local function f(x) return x + 1 end
local function g(n) if n > 0 then g(n - 1) end return n end      -- g(49): 50 entries
local function h(n) if n == 0 then return 0 end return h(n - 1) end -- tail calls; h(9): 10
local function k() end

for i = 1, 700 do f(i) end                -- 700, Lua to Lua
for i = 1, 100 do pcall(f, i) end         -- 100, from C
local co = coroutine.create(function()
  for i = 1, 100 do f(i); coroutine.yield(i) end -- 100, inside a coroutine
end)
while coroutine.resume(co) and coroutine.status(co) ~= "dead" do end
local t = setmetatable({}, {__add = function(a, b) return f(1) end})
for i = 1, 100 do local _ = t + 1 end     -- 100, from a metamethod
for i = 1, 5 do g(49) end                 -- 250
h(9)                                      -- 10
for i = 1, 100000 do k() end              -- enough events to wrap a small ring many times
print("done")
