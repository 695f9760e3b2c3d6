-- mt_bank.lua (multi-threaded): concurrent transactions on shared accounts.
-- Teller threads execute transfers between random accounts, each locking the
-- two accounts' mutexes in a global order (no deadlock) and appending to a
-- per-account ledger; an auditor thread repeatedly locks every account (in
-- the same order) and checks that money is conserved; tellers report batches
-- of completed transfer ids to a clerk thread over a channel. Final balances
-- and ledgers are independent of the interleaving and are checked against a
-- sequential replay. Stands for: transactional services, lock-ordering
-- disciplines in databases, fine-grained locking.
-- Tandem only (uses the thread library).
-- Usage: mt_bank.lua [scale] [threads]
-- threads (default 4): the tellers. The transfers are four streams (t, j),
-- j = 1..PER_STREAM, whatever the number of tellers: teller k of n runs the
-- k-th n-th of them in order (by default, teller t runs stream t), so the
-- output does not depend on it.

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local NACCOUNTS = 64
local NTELLERS = math.tointeger(tonumber(arg and arg[2] or "4") or 0)
if not NTELLERS or NTELLERS < 1 then error("mt_bank: threads must be a positive integer") end
local STREAMS = 4
local PER_STREAM = scaled(700000)
local TOTAL = STREAMS * PER_STREAM
local AUDITS = 20
local INITIAL = 100000

-- transfer j of teller t is a pure function of (t, j)
local function transfer_of(t, j)
  local s = (t * 1000003 + j * 7919) % 2147483648
  for _ = 1, 3 do s = (s * 1103515245 + 12345) % 2147483648 end
  local from = (s >> 4) % NACCOUNTS + 1
  local to = (s >> 11) % (NACCOUNTS - 1) + 1
  if to >= from then to = to + 1 end
  local amount = (s >> 17) % 500 + 1
  return from, to, amount
end

local accounts = {}
for i = 1, NACCOUNTS do
  accounts[i] = { id = i, lock = thread.mutex(), balance = INITIAL, ins = 0, outs = 0, digest = 0 }
end

local reports = thread.channel(32)

local clerk = thread.spawn(function()
  local seen, batches = 0, 0
  local idsum = 0
  while true do
    local batch = reports:recv()
    if batch == nil then break end
    batches = batches + 1
    for i = 1, #batch do
      seen = seen + 1
      idsum = idsum + batch[i]
    end
  end
  return seen, batches, idsum
end)

local tellers = {}
for k = 1, NTELLERS do
  tellers[k] = thread.spawn(function()
    local batch = {}
    local moved = 0
    -- transfers number g = 0 .. TOTAL-1 over the streams in order; this teller's share
    for g = (k - 1) * TOTAL // NTELLERS, k * TOTAL // NTELLERS - 1 do
      local t, j = g // PER_STREAM + 1, g % PER_STREAM + 1
      local from, to, amount = transfer_of(t, j)
      local a, b = accounts[from], accounts[to]
      local first, second = a, b
      if b.id < a.id then first, second = b, a end
      first.lock:lock()
      second.lock:lock()
      a.balance = a.balance - amount
      b.balance = b.balance + amount
      a.outs = a.outs + 1
      b.ins = b.ins + 1
      -- order-independent digests of what each account saw
      a.digest = (a.digest + (t * 131 + j) * amount) % 1000000007
      b.digest = (b.digest + (t * 137 + j) * amount) % 1000000007
      second.lock:unlock()
      first.lock:unlock()
      moved = moved + amount
      batch[#batch + 1] = t * 10000000 + j
      if #batch == 256 then
        reports:send(batch)
        batch = {}
      end
      if j % 4096 == 0 then thread.yield() end
    end
    if #batch > 0 then reports:send(batch) end
    return moved
  end)
end

local auditor = thread.spawn(function()
  local audits = 0
  for _ = 1, AUDITS do
    for i = 1, NACCOUNTS do accounts[i].lock:lock() end
    local total = 0
    for i = 1, NACCOUNTS do total = total + accounts[i].balance end
    for i = NACCOUNTS, 1, -1 do accounts[i].lock:unlock() end
    if total ~= NACCOUNTS * INITIAL then error("mt_bank: audit found total " .. total) end
    audits = audits + 1
    thread.sleep(0.001)
  end
  return audits
end)

local moved = 0
for t = 1, NTELLERS do moved = moved + tellers[t]:join() end
reports:close()
local seen, batches, idsum = clerk:join()
local audits = auditor:join()

-- sequential replay
local ref = {}
for i = 1, NACCOUNTS do ref[i] = { balance = INITIAL, ins = 0, outs = 0, digest = 0 } end
local ref_moved, ref_idsum = 0, 0
for t = 1, STREAMS do
  for j = 1, PER_STREAM do
    local from, to, amount = transfer_of(t, j)
    local a, b = ref[from], ref[to]
    a.balance = a.balance - amount
    b.balance = b.balance + amount
    a.outs = a.outs + 1
    b.ins = b.ins + 1
    a.digest = (a.digest + (t * 131 + j) * amount) % 1000000007
    b.digest = (b.digest + (t * 137 + j) * amount) % 1000000007
    ref_moved = ref_moved + amount
    ref_idsum = ref_idsum + t * 10000000 + j
  end
end

local total, checksum = 0, 0
for i = 1, NACCOUNTS do
  local a, r = accounts[i], ref[i]
  if a.balance ~= r.balance or a.ins ~= r.ins or a.outs ~= r.outs or a.digest ~= r.digest then
    error(string.format("mt_bank: account %d differs from the sequential replay", i))
  end
  total = total + a.balance
  checksum = (checksum * 1000003 + a.balance * 7 + a.digest) % 2147483647
end
if total ~= NACCOUNTS * INITIAL then error("mt_bank: money created or destroyed") end
-- every teller with at least one transfer sends at least one batch
if seen ~= TOTAL or idsum ~= ref_idsum or batches < math.min(NTELLERS, TOTAL) then error("mt_bank: clerk lost reports") end
if moved ~= ref_moved then error("mt_bank: tellers moved the wrong amount") end
if audits ~= AUDITS then error("mt_bank: audits missing") end
print(string.format("mt_bank: transfers=%d moved=%d audits=%d checksum=%d", seen, moved, audits, checksum))
