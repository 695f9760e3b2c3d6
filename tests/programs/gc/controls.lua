-- collectgarbage's controls as lua5.4 answers them: stop really stops automatic collection
-- (the heap only grows until restart), count follows allocations, the modes and their
-- parameters give back the previous ones.
print(collectgarbage("isrunning"))
collectgarbage()
local base = collectgarbage("count")
print(math.type(base), base > 0)

-- stopped: garbage piles up (a fixed amount of work, so profiles of this program do not
-- depend on how memory is counted: about 5 MB of tables and strings)
print(collectgarbage("stop"), collectgarbage("isrunning"))
local start = collectgarbage("count")
for n = 1, 30000 do
  local t = {n, n + 1, n + 2, tostring(n)}
end
print("grew by 1 MB or more", collectgarbage("count") >= start + 1024)
print(collectgarbage("isrunning"))

-- a small allocation shows in the count
local before = collectgarbage("count")
local keep = {}
for i = 1, 100 do keep[i] = {i} end
print("small allocation counted", collectgarbage("count") > before)

-- collect works while stopped, and frees the garbage
collectgarbage("collect")
print("collected", collectgarbage("count") < start + 1024)
print(collectgarbage("isrunning"))
print(collectgarbage("restart"), collectgarbage("isrunning"))

-- modes: each call gives back the previous mode; incremental's parameters are kept
print(collectgarbage("incremental"), collectgarbage("generational"), collectgarbage("incremental", 150, 300))
print(collectgarbage("setpause", 120), collectgarbage("setstepmul", 250))
print(collectgarbage("setpause"), collectgarbage("setstepmul"))

-- "step": true when the step ended a cycle. In incremental mode, with lua5.4's default
-- pause and a large step multiplier, a basic step (0) ends one on a heap this small (in
-- lua5.4; Tandem's steps run whole collections), a large debt (n KB) always does, a step
-- of 1 KB just after a collection is not due (the pause leaves room for more than that: no
-- step, false), a negative one never is. Generational steps never leave lua5.4's
-- collector in its pause state: always false.
local function steps(...)
  local r = {}
  for i = 1, select("#", ...) do r[i] = tostring((select(i, ...))) end
  return table.concat(r, " ")
end
print(collectgarbage("incremental", 200, 1000))
collectgarbage()
print("incremental, 1 KB after a collection", collectgarbage("step", 1))
print("incremental", steps(collectgarbage("step"), collectgarbage("step", 0),
                           collectgarbage("step", 100000), collectgarbage("step", -3)))
collectgarbage("stop") -- steps still run while stopped
print("incremental, stopped", collectgarbage("step", 0), collectgarbage("isrunning"))
collectgarbage("restart")
print(collectgarbage("generational", 30, 100))
print("generational", steps(collectgarbage("step"), collectgarbage("step", 0),
                            collectgarbage("step", 1), collectgarbage("step", 100000),
                            collectgarbage("step", -3)))
print(collectgarbage("incremental"))
print(collectgarbage("collect"), collectgarbage())
print(pcall(collectgarbage, "nope"))
print(pcall(collectgarbage, "incremental", "x"))
print(#keep)
