-- A small workload for the HTML report (run_html_tests.py, and docs/html-report.png): a
-- recursive function (a deep calling context tree), sorts of growing arrays (input sizes for
-- the plots), a loop with a branch (hot paths), table traffic (cache misses) and, with the
-- argument "threads", two language threads. Deterministic: every count is the same on each run.
-- The page must survive source text such as </script><!-- and <b>, which end up in it.
local mode = ...

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

-- Insertion sort of a reversed array: quadratic in n.
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

local function sorts()
  for n = 10, 120, 10 do
    local a = {}
    for i = 1, n do a[i] = n - i end
    isort(a, n)
  end
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

sorts()
local total = work(1)
if mode == "threads" then
  local hs = {}
  for k = 1, 2 do hs[k] = thread.spawn(work, k) end
  for k = 1, 2 do total = total + hs[k]:join() end
end
print(total)
