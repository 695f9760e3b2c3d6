-- An exact oracle for shadow profiling (run_shadow_tests.py, "exact"): one shadow runs the
-- whole of sample_known.lua's mix, so its profile of the mix is the exhaustive profile's,
-- count for count. With -Xshadow.length far beyond the run and -Xshadow.load=1 the program
-- forks once, at its first check (vm_shadow_first_check: within the first 3/16 of the length,
-- so inside warm()'s loop of WARM ticks); the shadow then runs warm()'s rest and the whole
-- mix, and ends at os.execute (a side effect) before the sleep, which gives it the time the
-- instrumented copy needs to get there before the program's end would stop it. The mix
-- (calls, calling contexts, two paths per function) is deterministic, so every run's is the
-- same. It is loaded before the fork: a shadow ends at a function the program has not named.
-- Usage: shadow_exact.lua [WARM] [N]
local known = assert(loadfile("sample_known.lua"))
local function warm(n) local s = 0 for i = 1, n do s = s + i end return s end

local WARM = tonumber(arg and arg[1]) or 2000000
local N = arg and arg[2] or "100000"
print(warm(WARM))
arg = {[0] = "sample_known.lua", N}
known()
os.execute("sleep 1")
