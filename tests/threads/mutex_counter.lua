-- a mutex-protected counter incremented 10^6 times across 8 threads, exact
local m = thread.mutex()
local count = 0
local hs = {}
for i = 1, 8 do
  hs[i] = thread.spawn(function()
    for _ = 1, 125000 do
      m:lock()
      count = count + 1
      m:unlock()
    end
  end)
end
for i = 1, 8 do hs[i]:join() end
print("count", count)
-- trylock
m:lock()
print("trylock while held", thread.spawn(function() return m:trylock() end):join())
m:unlock()
print("trylock free", m:trylock())
m:unlock()
-- errors
print(pcall(m.unlock, m))
m:lock()
print(pcall(m.lock, m))
m:unlock()
