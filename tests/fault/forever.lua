-- Runs until a signal ends it (tests/fault, signals): three threads and the main one call
-- f through g forever, allocating a little. "start" first (the runner's clock for the
-- signal's moment starts there: a signal before main() can block it kills the process with
-- no profile), "ready" once every thread has started.
print("start")
io.stdout:flush()
local function f(x) return {x} end
local function g() for i = 1, 100 do f(i) end end
local function spin() while true do g() thread.yield() end end
for k = 1, 3 do thread.spawn(spin) end
g()
print("ready")
io.stdout:flush()
spin()
