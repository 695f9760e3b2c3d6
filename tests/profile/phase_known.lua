-- The profile library around a phase of known shape (run_phase_tests.py).
--   tandem phase_known.lua OUTDIR THREADS [ANALYSES]
-- Outside the phase the same functions run with other counts, which must not show. The
-- phase: phase() once, work(5) (mid 15 times, leaf 45 times, rec 5 times from work), and
-- THREADS language threads each running work(10 * k); a second, short phase adds leaf(0)
-- once. The program checks profile.snapshot() itself (in and out of the phase, names
-- by prefix), then writes every format into OUTDIR for the runner to parse back.
local profile = require "profile"
local outdir, nthreads = arg[1], tonumber(arg[2])
local analyses = {}
for a in (arg[3] or "methodcount,callgraph,calltree"):gmatch("[^,]+") do analyses[#analyses + 1] = a end

local function leaf(x) return x end
local function mid(n)
  for i = 1, n do leaf(i) end
  if thread then thread.yield() end -- green threads interleave with frames open
end
local function rec(n) if n > 0 then return rec(n - 1) + 1 end return 0 end
local function work(k)
  for i = 1, k do mid(3) end
  rec(4)
  return k
end

local function by_prefix(t, name)
  for k, v in pairs(t or {}) do
    if k:sub(1, #name + 1) == name .. " " then return v end
  end
  return 0
end

local function expect(what, got, want)
  if got ~= want then error(("%s: %s, expected %s"):format(what, tostring(got), tostring(want)), 2) end
end

local function phase()
  work(5)
  if profile.running() and analyses[1] == "methodcount" then
    -- a snapshot in the middle of the phase is exact at that moment
    local s = profile.snapshot()
    expect("mid-phase work", by_prefix(s.calls, "work"), 1)
    expect("mid-phase mid", by_prefix(s.calls, "mid"), 5)
    expect("mid-phase leaf", by_prefix(s.calls, "leaf"), 15)
  end
  local hs = {}
  for k = 1, nthreads do hs[k] = thread.spawn(work, 10 * k) end
  for k = 1, nthreads do hs[k]:join() end
end

-- errors the library gives
local ok, err = pcall(profile.stop)
expect("stop before start", ok == false and err:find("not started") ~= nil, true)
ok, err = pcall(profile.snapshot)
expect("snapshot before start", ok == false and err:find("nothing profiled") ~= nil, true)
ok, err = pcall(profile.start, {"inputsize"})
expect("inputsize refused", ok == false and err:find("cannot profile a phase") ~= nil, true)
ok, err = pcall(profile.start, {"nosuch"})
expect("unknown analysis", ok == false and err:find("unknown analysis 'nosuch'") ~= nil, true)
ok, err = pcall(profile.start, {"methodcount", rate = 0.5})
expect("rate refused", ok == false and err:find("rate must be 1") ~= nil, true)

-- before: not counted
work(7); mid(2); rec(2)

profile.start(analyses)
ok, err = pcall(profile.start, analyses)
expect("second start", ok == false and err:find("already started") ~= nil, true)
expect("running", profile.running(), true)
phase()
profile.stop()
expect("stopped", profile.running(), false)

-- between the phases: not counted
work(11); mid(13)

profile.start()
leaf(0)
profile.stop()
ok, err = pcall(profile.start, {"calltree", "pathprof"})
expect("other analyses refused", ok == false and err:find("fixed by the first") ~= nil, true)

-- after: not counted
work(3)

if analyses[1] == "methodcount" then
  local s = profile.snapshot()
  local want_work, want_mid = 1 + nthreads, 5
  for k = 1, nthreads do want_mid = want_mid + 10 * k end
  expect("phase", by_prefix(s.calls, "phase"), 1)
  expect("work", by_prefix(s.calls, "work"), want_work)
  expect("mid", by_prefix(s.calls, "mid"), want_mid)
  expect("leaf", by_prefix(s.calls, "leaf"), 3 * want_mid + 1)
  expect("rec", by_prefix(s.calls, "rec"), 5 * want_work)
  -- the checks made inside the phase are calls of it too: expect twice after the start,
  -- and the mid-phase snapshot's three by_prefix and three expect
  expect("expect", by_prefix(s.calls, "expect"), 5)
  expect("by_prefix", by_prefix(s.calls, "by_prefix"), 3)
  local n = 0
  for _ in pairs(s.calls) do n = n + 1 end
  expect("functions", n, 7)
  expect("snapshot json", s.methodcount.total_calls, 1 + want_work + want_mid + 3 * want_mid + 1 + 5 * want_work + 8)
  if s.edges then
    local ph = by_prefix(s.edges, "phase")
    expect("edge phase -> work", by_prefix(ph, "work"), 1)
    expect("edge work -> mid", by_prefix(by_prefix(s.edges, "work"), "mid"), want_mid)
    expect("edge rec -> rec", by_prefix(by_prefix(s.edges, "rec"), "rec"), 4 * want_work)
  end
end

for _, f in ipairs{"text", "json", "folded", "callgrind", "annotate", "pprof", "html"} do
  local okw, e = profile.write(outdir .. "/phase." .. f, f)
  assert(okw, e)
end
ok, err = pcall(profile.write, outdir .. "/x", "nosuch")
expect("bad format", ok == false and err:find("format must be") ~= nil, true)
local w, e = profile.write("/nonexistent-dir/x", "text")
expect("unwritable", w == nil and e:find("nonexistent") ~= nil, true)
profile.reset()
expect("reset", profile.snapshot().methodcount and profile.snapshot().methodcount.total_calls or 0, 0)
print("ok")
