-- Green threads under shadow profiling (run_shadow_tests.py): three threads run the same
-- number of rounds; in each round thread k + 1 calls leaf 10k times (through round) and yields,
-- so at every stretch of the run the threads' calls are in the proportions 1:2:3 (a shadow
-- runs all three threads, interleaved on the one carrier as in the program). Then a pipeline
-- over channels (producer -> two workers -> consumer) whose sum must arrive whole in the
-- program whatever the shadows did.
local ROUNDS = 20000
local function leaf(x) return x end
local function round(k) for i = 1, 10 * k do leaf(i) end end
local function worker(k)
  for r = 1, ROUNDS do
    round(k)
    thread.yield()
  end
  return k
end
local hs = {}
for k = 1, 3 do hs[k] = thread.spawn(worker, k) end
local s = 0
for k = 1, 3 do s = s + hs[k]:join() end
print("work", s)

-- stage(input, f, output): move every value of [input] through [f] to [output], then close it
local function stage(input, f, output)
  for v in function() return input:recv() end do output:send(f(v)) end
end
local src, sq, N = thread.channel(8), thread.channel(4), 20000
local feeder = thread.spawn(function()
  for i = 1, N do src:send(i) end
  src:close()
end)
local squarers = {}
for w = 1, 2 do squarers[w] = thread.spawn(stage, src, function(v) return v * v % 1009 end, sq) end
local closer = thread.spawn(function()
  for w = 1, 2 do squarers[w]:join() end
  sq:close()
end)
local total, n = 0, 0
for v in function() return sq:recv() end do total, n = total + v, n + 1 end
feeder:join()
closer:join()
print("pipeline", n, total)
