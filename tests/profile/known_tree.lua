-- A known calling context tree (run_known_profiles.py, calltree).
local function b() return 1 end
local function a() b() end
local function c() b(); b() end
local function r(n) if n > 0 then r(n - 1) end return n end   -- not a tail call
local function d() a(); c() end
for i = 1, 4 do a() end        -- main;a 4, main;a;b 4
for i = 1, 3 do c() end        -- main;c 3, main;c;b 6
r(5)                           -- main;r, main;r;r, ... six levels deep, 1 each
for i = 1, 2 do r(2) end       -- main;r, main;r;r, main;r;r;r: 2 more each
d()                            -- main;d 1, main;d;a 1, main;d;a;b 1, main;d;c 1, main;d;c;b 2
