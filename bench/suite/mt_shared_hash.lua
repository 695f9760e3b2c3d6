-- mt_shared_hash.lua (multi-threaded): a shared hash table under locks. Four
-- threads each scan their own generated stream of words and update a shared
-- word -> {count, sum} map. Two designs are run on the same input: one table
-- behind a single mutex, and a lock-striped table (16 stripes, each a table
-- with its own mutex, taken with trylock first and lock on contention). Threads
-- also read the map while others write (monotonic counts are asserted). The
-- final maps must both equal a sequential count. Stands for: shared caches,
-- connection/session tables, concurrent counters in servers.
-- Tandem only (uses the thread library).
-- Usage: mt_shared_hash.lua [scale] [threads]
-- threads (default 4): the workers. The updates are four default workers'
-- worth at any thread count, shared equally; each worker's word stream is a
-- function of its number, so the checksum depends on the thread count (the
-- output says it), the number of updates does not.

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local NTHREADS = math.tointeger(tonumber(arg and arg[2] or "4") or 0)
if not NTHREADS or NTHREADS < 1 then error("mt_shared_hash: threads must be a positive integer") end
local TOTAL = 4 * scaled(150000)
-- the updates of worker t: an equal share, the first TOTAL % NTHREADS workers one more
local function share(t) return TOTAL // NTHREADS + (t <= TOTAL % NTHREADS and 1 or 0) end
local STRIPES = 16

-- shared, read-only vocabulary
local VOCAB = {}
do
  local s = 99
  local syl = { "ra", "to", "ne", "ki", "mu", "sa", "lo", "pe", "di", "vo", "ha", "zu" }
  local seen = {}
  while #VOCAB < 3000 do
    local parts = {}
    for i = 1, 2 + s % 3 do
      s = (s * 1103515245 + 12345) % 2147483648
      parts[i] = syl[(s >> 10) % #syl + 1]
    end
    s = (s * 1103515245 + 12345) % 2147483648
    local w = table.concat(parts) .. ((s >> 12) % 7)
    if not seen[w] then seen[w] = true; VOCAB[#VOCAB + 1] = w end
  end
end

-- the word stream of worker t is a pure function of t
local function stream(t)
  local s = t * 2654435761 % 4294967296 + 1
  local i, n = 0, share(t)
  return function()
    i = i + 1
    if i > n then return nil end
    s = (s * 6364136223846793005 + 1442695040888963407)
    local r = (s >> 33) % 1000000
    -- skewed: a few hot words and a long tail
    local idx = (r * r // 1000000) * #VOCAB // 1000000 + 1
    return VOCAB[idx], i
  end
end

local function str_hash(w)
  local h = 5381
  for k = 1, #w do h = (h * 33 + w:byte(k)) & 0xffffffff end
  return h
end

---------------------------------------------------------------- design 1: one lock
local function run_global()
  local m = thread.mutex()
  local map = {}
  local hs = {}
  for t = 1, NTHREADS do
    hs[t] = thread.spawn(function()
      local seen_counts = {}
      local reads = 0
      for w, i in stream(t) do
        m:lock()
        local e = map[w]
        if not e then
          e = { count = 0, sum = 0 }
          map[w] = e
        end
        e.count = e.count + 1
        e.sum = e.sum + i
        m:unlock()
        if i % 16 == 0 then
          -- a reader: counts only ever grow
          local probe = VOCAB[i % #VOCAB + 1]
          m:lock()
          local pe = map[probe]
          local c = pe and pe.count or 0
          m:unlock()
          if c < (seen_counts[probe] or 0) then error("mt_shared_hash: count went backwards") end
          seen_counts[probe] = c
          reads = reads + 1
        end
      end
      return reads
    end)
  end
  local reads = 0
  for t = 1, NTHREADS do reads = reads + hs[t]:join() end
  return map, reads
end

---------------------------------------------------------------- design 2: striped locks
local function run_striped()
  local stripes = {}
  for k = 1, STRIPES do stripes[k] = { lock = thread.mutex(), map = {} } end
  local hs = {}
  for t = 1, NTHREADS do
    hs[t] = thread.spawn(function()
      local contended = 0
      for w, i in stream(t) do
        local st = stripes[str_hash(w) % STRIPES + 1]
        if not st.lock:trylock() then
          contended = contended + 1
          st.lock:lock()
        end
        local map = st.map
        local e = map[w]
        if not e then
          e = { count = 0, sum = 0 }
          map[w] = e
        end
        e.count = e.count + 1
        e.sum = e.sum + i
        st.lock:unlock()
      end
      return contended
    end)
  end
  for t = 1, NTHREADS do hs[t]:join() end
  -- merge the stripes (every word lives in exactly one)
  local map = {}
  for k = 1, STRIPES do
    for w, e in pairs(stripes[k].map) do
      if map[w] then error("mt_shared_hash: word in two stripes") end
      if str_hash(w) % STRIPES + 1 ~= k then error("mt_shared_hash: word in the wrong stripe") end
      map[w] = e
    end
  end
  return map
end

---------------------------------------------------------------- check
local function sequential()
  local map = {}
  for t = 1, NTHREADS do
    for w, i in stream(t) do
      local e = map[w]
      if not e then e = { count = 0, sum = 0 }; map[w] = e end
      e.count = e.count + 1
      e.sum = e.sum + i
    end
  end
  return map
end

local function digest(map)
  local words = {}
  for w in pairs(map) do words[#words + 1] = w end
  table.sort(words)
  local h, total = 0, 0
  for _, w in ipairs(words) do
    local e = map[w]
    total = total + e.count
    h = (h * 1000003 + str_hash(w) + e.count * 7 + e.sum) % 2147483647
  end
  return #words, total, h
end

local rounds = 2
local g_words, g_total, g_hash, s_hash
for _ = 1, rounds do
  local gmap, reads = run_global()
  local want_reads = 0
  for t = 1, NTHREADS do want_reads = want_reads + share(t) // 16 end
  if reads ~= want_reads then error("mt_shared_hash: reader count") end
  g_words, g_total, g_hash = digest(gmap)
  local _, s_total, sh = digest(run_striped())
  s_hash = sh
  if s_total ~= g_total or s_hash ~= g_hash then error("mt_shared_hash: the two designs disagree") end
end
local r_words, r_total, r_hash = digest(sequential())
if r_words ~= g_words or r_total ~= g_total or r_hash ~= g_hash then
  error("mt_shared_hash: concurrent result differs from the sequential count")
end
if g_total ~= TOTAL then error("mt_shared_hash: lost updates") end
print(string.format("mt_shared_hash: threads=%d updates=%d words=%d checksum=%d", NTHREADS, g_total, g_words, g_hash))
