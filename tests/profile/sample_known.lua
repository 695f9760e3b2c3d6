-- A known mix for sampled instrumentation (run_sample_tests.py): a fixed pseudo-random
-- sequence (an LCG, so every run makes the same calls) picks one of five call shapes per
-- iteration, with weights 1:2:4:8:16 of 31, so calls, calling contexts and paths are spread
-- over the run at random positions: a sample of it is the binomial draw the test's error
-- bound assumes. Each shape branches on its argument (two paths per function).
local function a(x) if x % 2 == 0 then return x + 1 else return x - 1 end end
local function b(x) if x % 3 == 0 then return a(x) else return x * 2 end end
local function c(x) if x % 5 == 0 then return b(x) + a(x) else return x end end
local function d(x)
  local s = 0
  for k = 1, 3 do if (x + k) % 2 == 0 then s = s + k else s = s - 1 end end
  return s
end
local function e(x) if x % 7 < 3 then return c(x) else return d(x) end end

local N = tonumber(arg and arg[1]) or 300000
local seed, acc = 12345, 0
for i = 1, N do
  seed = (seed * 1103515245 + 12345) % 2147483648
  local r = (seed >> 8) % 31
  if r < 1 then acc = acc + a(i)
  elseif r < 3 then acc = acc + b(i)
  elseif r < 7 then acc = acc + c(i)
  elseif r < 15 then acc = acc + d(i)
  else acc = acc + e(i) end
end
print(acc)
