-- mt_pipeline.lua (multi-threaded): a producer-consumer pipeline over bounded
-- channels. A producer thread generates batches of web-server log lines; four
-- parser threads parse them (string patterns) into records; two enrichment
-- threads classify records and compute per-record hashes; an aggregator thread
-- folds everything into per-endpoint statistics. Channels are closed stage by
-- stage to shut the pipeline down. The aggregate is independent of scheduling
-- and is checked against a sequential computation. Stands for: ETL jobs,
-- stream processors, log shippers. Tandem only (uses the thread library).
-- Usage: mt_pipeline.lua [scale] [threads]
-- threads (default 4): the parser threads; the enrichers are half as many,
-- rounded up (the default: 4 and 2). The output does not depend on it.

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local NBATCH = scaled(2000)
local BATCH = 100
local PARSERS = math.tointeger(tonumber(arg and arg[2] or "4") or 0)
if not PARSERS or PARSERS < 1 then error("mt_pipeline: threads must be a positive integer") end
local ENRICHERS = (PARSERS + 1) // 2

local METHODS = { "GET", "GET", "GET", "POST", "PUT", "DELETE" }
local PATHS = { "/api/users", "/api/orders", "/api/items", "/static/app.js", "/login", "/health" }
local STATUS = { 200, 200, 200, 200, 201, 304, 404, 500 }

-- deterministic generator: batch b is always the same text, whoever makes it
local function make_batch(b)
  local s = b * 7919 + 17
  local function rand(n)
    s = (s * 1103515245 + 12345) % 2147483648
    return (s >> 8) % n + 1
  end
  local lines = {}
  for i = 1, BATCH do
    lines[i] = string.format("10.%d.%d.%d - - [day %d] \"%s %s/%d HTTP/1.1\" %d %d \"agent-%d\"",
      rand(255), rand(255), rand(255), b, METHODS[rand(#METHODS)], PATHS[rand(#PATHS)], rand(500),
      STATUS[rand(#STATUS)], rand(50000), rand(20))
  end
  return lines
end

local function parse(line)
  local ip, method, path, id, status, bytes, agent =
    line:match('^(%S+) %- %- %[[^%]]*%] "(%u+) (/[%w/._]-)/(%d+) HTTP/[%d.]+" (%d+) (%d+) "([^"]*)"$')
  if not ip then error("mt_pipeline: unparsable line " .. line) end
  return { ip = ip, method = method, path = path, id = tonumber(id), status = tonumber(status),
    bytes = tonumber(bytes), agent = agent }
end

local function enrich(r)
  local h = 2166136261
  local key = r.ip .. r.path .. r.id
  for i = 1, #key do h = ((h ~ key:byte(i)) * 16777619) & 0xffffffff end
  r.hash = h
  r.class = r.status >= 500 and "error" or r.status >= 400 and "client" or "ok"
  r.key = r.method .. " " .. r.path
  return r
end

local function new_stats() return {} end

local function fold(stats, r)
  local e = stats[r.key]
  if not e then
    e = { n = 0, bytes = 0, errors = 0, client = 0, maxid = 0, hash = 0 }
    stats[r.key] = e
  end
  e.n = e.n + 1
  e.bytes = e.bytes + r.bytes
  if r.class == "error" then e.errors = e.errors + 1 elseif r.class == "client" then e.client = e.client + 1 end
  if r.id > e.maxid then e.maxid = r.id end
  e.hash = (e.hash + r.hash) & 0xffffffff -- order independent
end

local function render(stats)
  local keys = {}
  for k in pairs(stats) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local e = stats[k]
    out[#out + 1] = string.format("%s n=%d bytes=%d err=%d cli=%d maxid=%d hash=%08x",
      k, e.n, e.bytes, e.errors, e.client, e.maxid, e.hash)
  end
  return out
end

---------------------------------------------------------------- the pipeline
local raw = thread.channel(8)       -- batches of lines
local parsed = thread.channel(16)   -- batches of records
local enriched = thread.channel(16) -- batches of records

local producer = thread.spawn(function()
  for b = 1, NBATCH do raw:send(make_batch(b)) end
  raw:close()
  return NBATCH
end)

local parsers = {}
for p = 1, PARSERS do
  parsers[p] = thread.spawn(function()
    local n = 0
    while true do
      local lines = raw:recv()
      if lines == nil then break end
      local recs = {}
      for i = 1, #lines do recs[i] = parse(lines[i]) end
      parsed:send(recs)
      n = n + #recs
    end
    return n
  end)
end

local enrichers = {}
for e = 1, ENRICHERS do
  enrichers[e] = thread.spawn(function()
    local n = 0
    while true do
      local recs = parsed:recv()
      if recs == nil then break end
      for i = 1, #recs do enrich(recs[i]) end
      enriched:send(recs)
      n = n + #recs
    end
    return n
  end)
end

local aggregator = thread.spawn(function()
  local stats = new_stats()
  local n = 0
  while true do
    local recs = enriched:recv()
    if recs == nil then break end
    for i = 1, #recs do fold(stats, recs[i]) end
    n = n + #recs
  end
  return stats, n
end)

-- shut down stage by stage
local produced = producer:join()
local nparsed = 0
for p = 1, PARSERS do nparsed = nparsed + parsers[p]:join() end
parsed:close()
local nenriched = 0
for e = 1, ENRICHERS do nenriched = nenriched + enrichers[e]:join() end
enriched:close()
local stats, nagg = aggregator:join()

local total = NBATCH * BATCH
if produced ~= NBATCH or nparsed ~= total or nenriched ~= total or nagg ~= total then
  error(string.format("mt_pipeline: lost records: %d parsed, %d enriched, %d aggregated of %d",
    nparsed, nenriched, nagg, total))
end

-- sequential reference on the same input
local ref = new_stats()
for b = 1, NBATCH do
  local lines = make_batch(b)
  for i = 1, #lines do fold(ref, enrich(parse(lines[i]))) end
end
local got, want = render(stats), render(ref)
if #got ~= #want then error("mt_pipeline: different number of endpoints") end
local h = 0
for i = 1, #want do
  if got[i] ~= want[i] then error("mt_pipeline: aggregate differs: " .. got[i] .. " vs " .. want[i]) end
  for k = 1, #want[i] do h = (h * 31 + want[i]:byte(k)) % 1000000007 end
end
print(string.format("mt_pipeline: records=%d endpoints=%d checksum=%d", total, #want, h))
