-- Loops closed by a conditional test's jump must reach safepoints. The compiler chains
-- jumps, so `while not done do ... if x then ... end end` ends its body with the test's own
-- JMP straight back to the loop's start: no separate back-edge JMP. The interpreter polled
-- only at JMP instructions, so these readers never stopped for a collection, and the
-- writer's first collection (and, on one carrier, any switch to it) waited forever
-- (-Xjit=off; compiled code polled there already). Now a taken backward jump of a test
-- polls as a back edge does (vm/vm_interp_body.h, CONDJUMP).
local done = false
local cur = {id = 0}
local bad = 0
local readers = {}
for r = 1, 3 do
  readers[r] = thread.spawn(function()
    while not done do local t = cur; if t.id == nil then bad = bad + 1 end end
  end)
end
local writer = thread.spawn(function()
  for i = 1, 300 do
    local t = {id = i}
    for k = 1, 20 do t[k] = k end
    cur = t
  end
  collectgarbage()   -- stops the world: every reader must come to a safepoint
  done = true
end)
writer:join()
for r = 1, 3 do readers[r]:join() end
print("bad reads", bad, "last id", cur.id)
