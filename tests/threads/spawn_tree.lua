-- threads spawning threads: a binary tree of depth 6 (127 threads)
local function tree(depth)
  if depth == 0 then return 1 end
  local l = thread.spawn(tree, depth - 1)
  local r = thread.spawn(tree, depth - 1)
  return 1 + l:join() + r:join()
end
print("nodes", tree(6))
-- many short-lived threads
local n = 0
for i = 1, 2000 do n = n + thread.spawn(function(x) return x end, 1):join() end
print("short", n)
