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
-- "step" runs a whole collection here (Boehm has no incremental steps), so it always ends a
-- cycle and says true; lua5.4 says false until its cycle ends: only the type is compared
print(type(collectgarbage("step")), type(collectgarbage("step", 100)))
print(collectgarbage("collect"), collectgarbage())
print(pcall(collectgarbage, "nope"))
print(pcall(collectgarbage, "incremental", "x"))
print(#keep)
