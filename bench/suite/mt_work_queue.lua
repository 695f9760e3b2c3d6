-- mt_work_queue.lua (multi-threaded): a thread-pool task runner. Worker
-- threads take tasks from a shared FIFO protected by a mutex and a condition
-- variable; tasks may submit further tasks. The jobs are fork-join merge sorts
-- (a sort task splits its input into two child tasks; the last child to finish
-- schedules the merge continuation of its parent) and independent prime
-- counting tasks over ranges. The main thread waits on a second condition
-- variable until the pool drains, then shuts the workers down. Results are
-- checked against sequential code. Stands for: executors, job systems in game
-- engines and build tools, fork-join frameworks.
-- Tandem only (uses the thread library).
-- Usage: mt_work_queue.lua [scale] [threads]
-- threads (default 4): the pool's workers; only the workers= field of the
-- output depends on it.

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local NWORKERS = math.tointeger(tonumber(arg and arg[2] or "4") or 0)
if not NWORKERS or NWORKERS < 1 then error("mt_work_queue: threads must be a positive integer") end
local NARRAYS = scaled(40)
local ARRAY_LEN = 20000
local CUTOFF = 500
local PRIME_LIMIT = scaled(1200000)
local PRIME_CHUNK = 10000

---------------------------------------------------------------- the pool
local Pool = {}
Pool.__index = Pool

local function new_pool(n)
  local p = setmetatable({
    m = thread.mutex(), work = thread.cond(), idle = thread.cond(),
    queue = {}, head = 1, tail = 0, pending = 0, stop = false, workers = {},
  }, Pool)
  for i = 1, n do
    p.workers[i] = thread.spawn(function()
      local ran = 0
      while true do
        p.m:lock()
        while p.head > p.tail and not p.stop do p.work:wait(p.m) end
        if p.head > p.tail then -- stopping and nothing left
          p.m:unlock()
          break
        end
        local task = p.queue[p.head]
        p.queue[p.head] = nil
        p.head = p.head + 1
        p.m:unlock()
        task.fn(task)
        ran = ran + 1
        p.m:lock()
        p.pending = p.pending - 1
        if p.pending == 0 then p.idle:broadcast() end
        p.m:unlock()
      end
      return ran
    end)
  end
  return p
end

function Pool:submit(fn, data)
  data = data or {}
  data.fn = fn
  self.m:lock()
  self.tail = self.tail + 1
  self.queue[self.tail] = data
  self.pending = self.pending + 1
  self.work:signal()
  self.m:unlock()
end

function Pool:wait_idle()
  self.m:lock()
  while self.pending > 0 do self.idle:wait(self.m) end
  self.m:unlock()
end

function Pool:shutdown()
  self.m:lock()
  self.stop = true
  self.work:broadcast()
  self.m:unlock()
  local total = 0
  for i = 1, #self.workers do total = total + self.workers[i]:join() end
  return total
end

---------------------------------------------------------------- fork-join merge sort
local pool = new_pool(NWORKERS)
local join_lock = thread.mutex()

local function insertion_sort(a)
  for i = 2, #a do
    local x = a[i]
    local j = i - 1
    while j >= 1 and a[j] > x do
      a[j + 1] = a[j]
      j = j - 1
    end
    a[j + 1] = x
  end
  return a
end

local function merge(a, b)
  local out = {}
  local i, j, k = 1, 1, 0
  local na, nb = #a, #b
  while i <= na and j <= nb do
    k = k + 1
    if a[i] <= b[j] then out[k] = a[i]; i = i + 1 else out[k] = b[j]; j = j + 1 end
  end
  while i <= na do k = k + 1; out[k] = a[i]; i = i + 1 end
  while j <= nb do k = k + 1; out[k] = b[j]; j = j + 1 end
  return out
end

local sort_task, finish

-- node: { input, parent, result, left, right, remaining, on_done }
function finish(node)
  local parent = node.parent
  if not parent then
    node.on_done(node.result)
    return
  end
  join_lock:lock()
  parent.remaining = parent.remaining - 1
  local last = parent.remaining == 0
  join_lock:unlock()
  if last then
    -- continuation: merge the children's results
    pool:submit(function(t)
      local n = t.node
      n.result = merge(n.left.result, n.right.result)
      n.left, n.right, n.input = nil, nil, nil
      finish(n)
    end, { node = parent })
  end
end

function sort_task(t)
  local node = t.node
  local a = node.input
  if #a <= CUTOFF then
    local copy = {}
    for i = 1, #a do copy[i] = a[i] end
    node.result = insertion_sort(copy)
    finish(node)
    return
  end
  local mid = #a // 2
  local l, r = {}, {}
  for i = 1, mid do l[i] = a[i] end
  for i = mid + 1, #a do r[i - mid] = a[i] end
  node.left = { input = l, parent = node }
  node.right = { input = r, parent = node }
  node.remaining = 2
  pool:submit(sort_task, { node = node.left })
  pool:submit(sort_task, { node = node.right })
end

---------------------------------------------------------------- prime counting tasks
local function count_primes(lo, hi)
  local c = 0
  for n = math.max(lo, 2), hi do
    local prime = true
    if n % 2 == 0 then
      prime = n == 2
    else
      local d = 3
      while d * d <= n do
        if n % d == 0 then prime = false; break end
        d = d + 2
      end
    end
    if prime then c = c + 1 end
  end
  return c
end

---------------------------------------------------------------- submit everything
local arrays, sorted = {}, {}
local results_lock = thread.mutex()
for k = 1, NARRAYS do
  local s = k * 7777
  local a = {}
  for i = 1, ARRAY_LEN do
    s = (s * 1103515245 + 12345) % 2147483648
    a[i] = s % 100000
  end
  arrays[k] = a
  local root = { input = a, on_done = function(res)
    results_lock:lock()
    sorted[k] = res
    results_lock:unlock()
  end }
  pool:submit(sort_task, { node = root })
end

local prime_counts = {}
local nchunks = 0
for lo = 1, PRIME_LIMIT, PRIME_CHUNK do
  nchunks = nchunks + 1
  local idx = nchunks
  pool:submit(function(t)
    local c = count_primes(t.lo, math.min(t.lo + PRIME_CHUNK - 1, PRIME_LIMIT))
    results_lock:lock()
    prime_counts[idx] = c
    results_lock:unlock()
  end, { lo = lo })
end

pool:wait_idle()
local ran = pool:shutdown()

---------------------------------------------------------------- verify
local checksum = 0
for k = 1, NARRAYS do
  local res = sorted[k]
  if not res or #res ~= ARRAY_LEN then error("mt_work_queue: sort job " .. k .. " incomplete") end
  local ref = {}
  for i = 1, ARRAY_LEN do ref[i] = arrays[k][i] end
  table.sort(ref)
  for i = 1, ARRAY_LEN do
    if res[i] ~= ref[i] then error("mt_work_queue: sort job " .. k .. " wrong at " .. i) end
  end
  for i = 1, ARRAY_LEN, 101 do checksum = (checksum * 31 + res[i]) % 1000000007 end
end
local primes = 0
for i = 1, nchunks do
  if not prime_counts[i] then error("mt_work_queue: prime chunk " .. i .. " missing") end
  primes = primes + prime_counts[i]
end
-- an independent sieve for the prime count
local composite, ref_primes = {}, 0
for n = 2, PRIME_LIMIT do
  if not composite[n] then
    ref_primes = ref_primes + 1
    for m = n * n, PRIME_LIMIT, n do composite[m] = true end
  end
end
if primes ~= ref_primes then error("mt_work_queue: prime count " .. primes .. " vs " .. ref_primes) end

-- tasks per sort: every split and every merge is a task
local leaves = 0
local function count_tasks(n)
  if n <= CUTOFF then leaves = leaves + 1; return 1 end
  local mid = n // 2
  return 2 + count_tasks(mid) + count_tasks(n - mid) -- the node's sort task + its merge task
end
local expected_tasks = NARRAYS * (count_tasks(ARRAY_LEN)) + nchunks
if ran ~= expected_tasks then
  error(string.format("mt_work_queue: ran %d tasks, expected %d", ran, expected_tasks))
end
print(string.format("mt_work_queue: workers=%d tasks=%d arrays=%d primes=%d checksum=%d",
  NWORKERS, ran, NARRAYS, primes, checksum))
