-- Programs of known input size for -Xprofile=inputsize (run_inputsize_tests.py has the
-- expected points). Every function below touches the heap only as its comment says: its
-- tables and functions come in as arguments (no upvalue or global is read), so the cells it
-- reads are exactly the ones named. Run as: known_inputsize.lua <case> [n] [file]
local case, N, file = ...
N = tonumber(N) or 100

-- Reads a[1..n]: RMS = TRMS = n, cost linear in n.
local function sum(a, n)
  local s = 0
  for i = 1, n do s = s + a[i] end
  return s
end

-- Insertion sort of a[1..n]: every cell is read before the sort writes it (TRMS = RMS = n);
-- on a reversed array the cost is quadratic.
local function isort(a, n)
  for i = 2, n do
    local v, j = a[i], i - 1
    while j >= 1 and a[j] > v do
      a[j + 1] = a[j]
      j = j - 1
    end
    a[j + 1] = v
  end
end

-- Writes t[1..n] (slots that exist already), then reads them: no input (RMS = TRMS = 0).
local function wbr(t, n)
  for i = 1, n do t[i] = i end
  local s = 0
  for i = 1, n do s = s + t[i] end
  return s
end

-- The paper's figure 2 with channels as the semaphores: the producer writes box[1] n times,
-- the consumer reads it n times, each read after a new write by the other thread: the
-- consumer's RMS is 1, its TRMS n.
local function producer(box, full, empty, send, recv, n)
  for i = 1, n do
    recv(empty)
    box[1] = i
    send(full, true)
  end
end
local function consumer(box, full, empty, send, recv, n)
  local s = 0
  for _ = 1, n do
    recv(full)
    s = s + box[1]
    send(empty, true)
  end
  return s
end

-- Figure 3: reads n lines from a file into the same buffer cells (io's read buffer): RMS 1,
-- TRMS n (each line is new external input).
local function readlines(read, f, n)
  local c = 0
  for _ = 1, n do
    local l = read(f, "l")
    if l == nil then break end
    c = c + 1
  end
  return c
end

-- The same sums through the library's iterators: ipairs and pairs read the slots for the
-- loop (PROF_NEED_LIBMEM), so RMS = TRMS = n again, plus one: the global ipairs or pairs.
local function sum_ipairs(a)
  local s = 0
  for _, v in ipairs(a) do s = s + v end
  return s
end
local function sum_pairs(a)
  local s = 0
  for _, v in pairs(a) do s = s + v end
  return s
end

-- Counts the bytes of s equal to c, reading each with string.byte: every byte returned is a
-- cell read (PROF_NEED_LIBMEM), so RMS = TRMS = #s.
local function count_byte(byte, s, c)
  local k = 0
  for i = 1, #s do
    if byte(s, i) == c then k = k + 1 end
  end
  return k
end

local function filled(n, rev)
  local a = {}
  for i = 1, n do a[i] = rev and n - i + 1 or i end
  return a
end

if case == "sum" then
  local a, tot = filled(N), 0
  for n = 1, N do tot = tot + sum(a, n) end
  print(tot)
elseif case == "iter" then
  local tot = 0
  for n = 1, N do
    local a = filled(n)
    tot = tot + sum_ipairs(a) + sum_pairs(a)
  end
  print(tot)
elseif case == "bytes" then
  local s, tot = string.rep("ab", N), 0
  for n = 1, N do tot = tot + count_byte(string.byte, s:sub(1, n), 97) end
  print(tot)
elseif case == "isort" then
  for n = 1, N do isort(filled(n, true), n) end
  print("sorted")
elseif case == "wbr" then
  for n = 1, N do wbr(filled(n), n) end
  print("written")
elseif case == "prodcons" then
  local box, full, empty = {0}, thread.channel(1), thread.channel(1)
  local ch = thread.channel(1)
  local send, recv = ch.send, ch.recv
  empty:send(true)
  local p = thread.spawn(producer, box, full, empty, send, recv, N)
  local c = thread.spawn(consumer, box, full, empty, send, recv, N)
  p:join()
  print(c:join())
elseif case == "lines" then
  local f = assert(io.open(file, "r"))
  print(readlines(f.read, f, N))
  f:close()
end
