-- sample_loops.lua: the loops of paths_loops.lua (nested loops, break, goto, while and repeat,
-- early returns) run [arg 1] times (default 400) from one load, so that the same functions'
-- loops are hot and sampling windows (run_sample_tests.py, "loops") open and close at their
-- back edges: under the JIT, flips between the plain and the instrumented compiled code in
-- the middle of a loop. Its own output is one line; paths_loops.lua's is swallowed.
local chunk = assert(loadfile("paths_loops.lua"))
local reps = tonumber(arg and arg[1]) or 400
local realprint, realwrite = print, io.write
print, io.write = function() end, function() end
for _ = 1, reps do chunk() end
print, io.write = realprint, realwrite
print("paths_loops.lua ran", reps, "times")
