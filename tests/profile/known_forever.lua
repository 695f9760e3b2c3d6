-- Runs until killed (run_known_profiles.py sends SIGTERM after "ready"): the profile is
-- written whole and marked partial.
local function f(x) return x end
local function g() for i = 1, 100 do f(i) end end
for i = 1, 100 do g() end
print("ready")
io.stdout:flush()
while true do g() end
