-- A realistic program: a binary heap priority queue, a deque, a set class
-- with operators, and an LRU cache.
local Heap = {}
Heap.__index = Heap
function Heap.new(cmp) return setmetatable({n = 0, cmp = cmp or function(a, b) return a < b end}, Heap) end
function Heap:push(v)
  self.n = self.n + 1
  local i = self.n
  self[i] = v
  while i > 1 do
    local p = i // 2
    if not self.cmp(self[i], self[p]) then break end
    self[i], self[p] = self[p], self[i]
    i = p
  end
end
function Heap:pop()
  if self.n == 0 then return nil end
  local top = self[1]
  self[1] = self[self.n]
  self[self.n] = nil
  self.n = self.n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= self.n and self.cmp(self[l], self[m]) then m = l end
    if r <= self.n and self.cmp(self[r], self[m]) then m = r end
    if m == i then break end
    self[i], self[m] = self[m], self[i]
    i = m
  end
  return top
end
local h = Heap.new()
for _, v in ipairs({5, 3, 9, 1, 7, 2, 8, 6, 4, 0}) do h:push(v) end
local out = {}
for v in function() return h:pop() end do out[#out + 1] = v end
print("heap", table.concat(out, " "))

local Deque = {}
Deque.__index = Deque
function Deque.new() return setmetatable({first = 0, last = -1}, Deque) end
function Deque:pushleft(v) self.first = self.first - 1; self[self.first] = v end
function Deque:pushright(v) self.last = self.last + 1; self[self.last] = v end
function Deque:popleft() if self.first > self.last then return nil end local v = self[self.first]; self[self.first] = nil; self.first = self.first + 1; return v end
function Deque:popright() if self.first > self.last then return nil end local v = self[self.last]; self[self.last] = nil; self.last = self.last - 1; return v end
local d = Deque.new()
for i = 1, 3 do d:pushright(i); d:pushleft(-i) end
print("deque", d:popleft(), d:popright(), d:popleft(), d:popright(), d:popleft(), d:popright(), d:popleft())

local Set = {}
Set.__index = Set
local function set(list) local s = setmetatable({items = {}}, Set); for _, v in ipairs(list) do s.items[v] = true end; return s end
function Set:list() local l = {}; for k in pairs(self.items) do l[#l + 1] = k end; table.sort(l); return l end
Set.__add = function(a, b) local s = set({}); for k in pairs(a.items) do s.items[k] = true end; for k in pairs(b.items) do s.items[k] = true end; return s end
Set.__mul = function(a, b) local s = set({}); for k in pairs(a.items) do if b.items[k] then s.items[k] = true end end; return s end
Set.__sub = function(a, b) local s = set({}); for k in pairs(a.items) do if not b.items[k] then s.items[k] = true end end; return s end
Set.__len = function(a) return #a:list() end
Set.__eq = function(a, b) return #(a - b) == 0 and #(b - a) == 0 end
Set.__le = function(a, b) return #(a - b) == 0 end
Set.__lt = function(a, b) return a <= b and not (b <= a) end
Set.__tostring = function(a) return "{" .. table.concat(a:list(), ", ") .. "}" end
local A, B = set({1, 2, 3, 4}), set({3, 4, 5})
print(tostring(A + B), tostring(A * B), tostring(A - B), #(A + B))
print(A == B, A * B == set({4, 3}), set({3}) < B, B <= B, B < B)

local function lru(capacity)
  local map, order = {}, {}
  local cache = {}
  function cache.get(k)
    local v = map[k]
    if v == nil then return nil end
    for i, key in ipairs(order) do if key == k then table.remove(order, i) break end end
    order[#order + 1] = k
    return v
  end
  function cache.put(k, v)
    if map[k] == nil and #order >= capacity then
      local old = table.remove(order, 1)
      map[old] = nil
    elseif map[k] ~= nil then
      for i, key in ipairs(order) do if key == k then table.remove(order, i) break end end
    end
    map[k] = v
    order[#order + 1] = k
  end
  function cache.keys() return table.concat(order, ",") end
  return cache
end
local c = lru(3)
c.put("a", 1); c.put("b", 2); c.put("c", 3)
c.get("a")
c.put("d", 4)
print("lru", c.keys(), c.get("b"), c.get("a"))
