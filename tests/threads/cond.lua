-- condition variables: a bounded queue with wait/signal/broadcast
local m, notempty, notfull = thread.mutex(), thread.cond(), thread.cond()
local q, cap = {}, 5
local N = 5000
local prod = thread.spawn(function()
  for i = 1, N do
    m:lock()
    while #q >= cap do notfull:wait(m) end
    q[#q + 1] = i
    notempty:signal()
    m:unlock()
  end
end)
local sum = 0
for _ = 1, N do
  m:lock()
  while #q == 0 do notempty:wait(m) end
  sum = sum + table.remove(q, 1)
  notfull:signal()
  m:unlock()
end
prod:join()
print("sum", sum)
-- broadcast wakes every waiter
local go = false
local ws = {}
for i = 1, 6 do
  ws[i] = thread.spawn(function()
    m:lock()
    while not go do notempty:wait(m) end
    m:unlock()
    return i
  end)
end
thread.sleep(0.02)
m:lock()
go = true
notempty:broadcast()
m:unlock()
local t = 0
for i = 1, 6 do t = t + ws[i]:join() end
print("woken", t)
print(pcall(notempty.wait, notempty, m))
