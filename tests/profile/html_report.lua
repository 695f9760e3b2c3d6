-- A small workload for the HTML report (run_html_tests.py, and docs/html-report.png): a
-- recursive function (a deep calling context tree), inversion counts of growing arrays (input sizes for
-- the plots), a loop with a branch (hot paths), table traffic (cache misses) and, with the
-- argument "threads", two language threads. Deterministic: every count is the same on each run.
-- The page must survive source text such as </script><!-- and <b>, which end up in it.
local mode = ...

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

-- Inversions of a[1..n] counted pair by pair: quadratic in n.
local function inversions(a, n)
  local c = 0
  for i = 1, n - 1 do
    local v = a[i]
    for j = i + 1, n do
      if a[j] < v then c = c + 1 end
    end
  end
  return c
end

local function sorts()
  local c = 0
  for n = 10, 120, 10 do
    local a = {}
    for i = 1, n do a[i] = (i * 37) % n end
    c = c + inversions(a, n)
  end
  return c
end

local function classify(x)
  if x % 3 == 0 then return "fizz" elseif x % 5 == 0 then return "buzz" end
  return "other"
end

local function tally(n)
  local t = {}
  for i = 1, n do
    local k = classify(i)
    t[k] = (t[k] or 0) + 1
  end
  return t
end

local function work(k)
  local s = fib(12 + k)
  local t = tally(500 * k)
  return s + t.fizz
end

local total = sorts() + work(1)
if mode == "threads" then
  local hs = {}
  for k = 1, 2 do hs[k] = thread.spawn(work, k) end
  for k = 1, 2 do total = total + hs[k]:join() end
end
print(total)
