-- Many threads call functions nobody has called yet at the same moment: with -Xjit=on
-- (tests/jit) each function is compiled by exactly one of them under the JIT's lock and
-- published to the others; every thread must compute the same results as the interpreter.
local fs = {}
for k = 1, 24 do
  -- a fresh Proto per function: load() compiles each chunk on its own
  fs[k] = load(string.format([[
    local n = ...
    local s, f = 0, 0.5
    for i = 1, n do
      if i %% %d == 0 then s = s + i * %d else s = s - 1 end
      f = f * 1.0001 + i / %d
    end
    return s, f
  ]], k + 1, k, k + 2))
end
local go = false
local nthreads = 6
local handles = {}
for t = 1, nthreads do
  handles[t] = thread.spawn(function()
    while not go do thread.yield() end
    local out = {}
    for k = 1, #fs do
      local s, f = fs[k](2000 + k)
      out[k] = string.format("%d %.6f", s, f)
    end
    return table.concat(out, ";")
  end)
end
go = true
local first
local same = true
for t = 1, nthreads do
  local r = handles[t]:join()
  if first == nil then first = r elseif r ~= first then same = false end
end
print("all threads agree", same)
for line in first:gmatch("[^;]+") do print(line) end
