-- sample_loops.lua: the loops of paths_loops.lua (nested loops, break, goto, while and repeat,
-- early returns) run [arg 1] times (default 400) from one load, so that the same functions'
-- loops are hot and sampling windows (run_sample_tests.py, "loops") open and close at their
-- back edges: under the JIT, flips between the plain and the instrumented compiled code in
-- the middle of a loop. Its own output is one line; paths_loops.lua's is swallowed.
-- Two more kinds of ticks run with it: the back edges of a float for loop, which compiled
-- code steps through the interpreter (the step counts the tick: vm_jit_step), and entries of
-- a Lua function that table.sort calls, so windows open and close inside a call into C (the
-- compiled caller must notice when the call returns: jit_call's window test).
local chunk = assert(loadfile("paths_loops.lua"))
local reps = tonumber(arg and arg[1]) or 400
local realprint, realwrite = print, io.write
print, io.write = function() end, function() end

local function floats(n)
  local s = 0
  for x = 0.5, n, 0.5 do s = s + x end
  return s
end

local function greater(a, b) return a > b end

local function sorted(n)
  local t = {}
  for i = 1, n do t[i] = (i * 7919) % n end
  table.sort(t, greater)
  return t[1] + floats(2)
end

local total = 0
for _ = 1, reps do
  chunk()
  total = total + floats(12) + sorted(24)
end
assert(total == reps * (floats(12) + 23 + floats(2)))
print, io.write = realprint, realwrite
print("paths_loops.lua ran", reps, "times")
