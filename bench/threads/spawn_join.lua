-- spawn + join of a thread that returns its argument, N times (arg[1])
local N = tonumber(arg[1]) or 20000
local f = function(x) return x end
local s = 0
for _ = 1, N do s = s + thread.spawn(f, 1):join() end
assert(s == N)
