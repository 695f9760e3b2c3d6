-- Known call counts (run_known_profiles.py, methodcount): every Lua function entry is
-- counted, whoever makes the call (Lua, a tail call, C code, a metamethod, a coroutine).
local function f(x) return x + 1 end                                  -- 10 + 7 + 3 + 2 = 22
local function g(x) return f(x) end                                   -- 7 (tail-calls f)
local function k(n) if n == 0 then return 0 end return k(n - 1) end   -- k(20): 21 (tail calls)
for i = 1, 10 do f(i) end                                             -- f: 10
for i = 1, 7 do g(i) end                                              -- g: 7, f: 7
k(20)                                                                 -- k: 21
local s = string.gsub("a,b,c,d", "%a", function(c) return c:upper() end) -- 4 (called from C)
local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(f(i)) end end)
co(); co(); co()                                                      -- the body: 1, f: 3
local t = setmetatable({}, {__index = function(_, key) return f(key) end})
local _ = t[1] + t[2]                                                 -- __index: 2, f: 2
print(s)
