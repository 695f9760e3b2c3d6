-- Allocates in a pcall, then outside one, on the main thread and two others (tests/fault,
-- -Xtest.alloc_fail=N for many N): every run prints "caught not enough memory" or runs to
-- "done", or ends with "not enough memory" on stderr and exit 1; never a crash.
local function build(n)
  local t = {}
  for i = 1, n do t[i] = {i, tostring(i), string.rep("x", i % 50)} end
  return t
end
local function guarded(n)
  local ok, err = pcall(build, n)
  if not ok then print("caught " .. tostring(err)) end
  return ok
end
local hs = {}
for k = 1, 2 do hs[k] = thread.spawn(guarded, 300) end
guarded(1000)
for k = 1, 2 do hs[k]:join() end
local t = build(200)
print("done", #t)
