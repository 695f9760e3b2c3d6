-- contended mutex: 4 threads increment one counter under one mutex, N times in all (arg[1])
local N = tonumber(arg[1]) or 400000
local m = thread.mutex()
local count = 0
local hs = {}
for i = 1, 4 do
  hs[i] = thread.spawn(function()
    for _ = 1, N // 4 do
      m:lock()
      count = count + 1
      m:unlock()
    end
  end)
end
for i = 1, 4 do hs[i]:join() end
assert(count == N // 4 * 4)
