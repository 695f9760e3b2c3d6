-- io.write and file writes from several threads never interleave within a call
local name = os.tmpname()
local f = assert(io.open(name, "w"))
local hs = {}
for t = 1, 4 do
  hs[t] = thread.spawn(function()
    for i = 1, 500 do
      f:write("thread ", t, " line ", i, " ", string.rep("x", 50), "\n")
    end
  end)
end
for t = 1, 4 do hs[t]:join() end
f:close()
local n, bad = 0, 0
for line in io.lines(name) do
  n = n + 1
  if not line:match("^thread %d line %d+ x+$") or #line:match("x+$") ~= 50 then bad = bad + 1 end
end
os.remove(name)
print("lines", n, "bad", bad)
