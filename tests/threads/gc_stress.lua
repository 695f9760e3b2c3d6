-- 200 threads allocating heavily while collections are forced (see gc_stress.opts)
local N = 200
local hs = {}
for i = 1, N do
  hs[i] = thread.spawn(function()
    local keep = {}
    for j = 1, 200 do
      keep[j % 40 + 1] = {j, tostring(j) .. "x" .. i, {i}}
      if j % 16 == 0 then thread.yield() end
    end
    local s = 0
    for k = 1, 40 do
      local e = keep[k]
      assert(e[2] == tostring(e[1]) .. "x" .. i and e[3][1] == i)
      s = s + e[1]
    end
    return s
  end)
end
local tot = 0
for i = 1, N do tot = tot + hs[i]:join() end
print(N, tot)
