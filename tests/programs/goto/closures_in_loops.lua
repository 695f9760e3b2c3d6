-- Closures in loops capture a fresh variable per iteration, also when the
-- loop is built with goto (a local declared after the label is new each time).
local fs = {}
for i = 1, 3 do
  fs[#fs + 1] = function() return i end
end
print(fs[1](), fs[2](), fs[3]())

local gs = {}
local k = 1
::again::
do
  local v = k * 100
  gs[#gs + 1] = function() v = v + 1; return v end
end
k = k + 1
if k <= 3 then goto again end
print(gs[1](), gs[1](), gs[2](), gs[3]())

-- while loop: each iteration's local is distinct, the outer one is shared
local hs = {}
local shared = 0
local j = 0
while j < 3 do
  j = j + 1
  local own = j
  hs[j] = function() shared = shared + 1; own = own + 10; return own, shared end
end
print(hs[1]())
print(hs[1]())
print(hs[2]())
print(hs[3]())

-- continue-style goto with a captured local
local cs = {}
for i = 1, 6 do
  local sq = i * i
  if i % 2 == 1 then goto continue end
  cs[#cs + 1] = function() return sq end
  ::continue::
end
for _, f in ipairs(cs) do io.write(f(), " ") end
print()
