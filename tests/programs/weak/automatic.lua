-- Finalizers and weak tables with automatic collections only (no collectgarbage() call):
-- allocation-driven collections must clear weak tables and queue finalizers, which then run
-- on the program's thread (issue 15).
local count = 0
local mt = {__gc = function() count = count + 1 end}
for i = 1, 50000 do setmetatable({}, mt) end
local t = {}
for i = 1, 20000 do t[i] = {i} end   -- more allocation, more collections and C calls
print("some finalizers ran", count > 0)

local cache = setmetatable({}, {__mode = "k"})
for i = 1, 50000 do cache[{}] = {} end
local n = 0
for _ in pairs(cache) do n = n + 1 end
print("weak-keyed cache did not keep everything", n < 50000)
