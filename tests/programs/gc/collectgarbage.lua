-- collectgarbage options that every implementation supports; only types
-- and simple properties are printed.
print(type(collectgarbage("count")), math.type(collectgarbage("count")))
print(collectgarbage())
print(collectgarbage("collect"))
local before = collectgarbage("count")
do
  local big = {}
  for i = 1, 100000 do big[i] = {i} end
end
collectgarbage()
collectgarbage()
local after = collectgarbage("count")
print("count is positive", before > 0, after > 0)
print(type(collectgarbage("step")))
print(type(collectgarbage("isrunning")))
collectgarbage("stop")
collectgarbage("restart")
print(collectgarbage("isrunning"))
print(pcall(collectgarbage, "bogus"))
