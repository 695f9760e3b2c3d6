-- astar.lua: path finding on generated game maps. A map generator carves
-- rooms and corridors and scatters terrain of different costs; A* with a
-- binary-heap open set and an octile-distance heuristic finds shortest paths
-- between random points (8-way moves, no corner cutting), and Dijkstra's
-- algorithm from the same start must give the same costs. Paths are walked
-- back and validated step by step. Stands for: game AI, routing, navigation
-- meshes, any priority-queue driven graph search.
-- Usage: astar.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 1234567
local function rand(n)
  seed = seed ~ (seed << 13) & 0xffffffff
  seed = seed ~ (seed >> 17)
  seed = seed ~ (seed << 5) & 0xffffffff
  return seed % n + 1
end

-- costs are integers: straight step 10, diagonal 14, times the terrain factor
local W, H = 160, 120
local WALL = 0

---------------------------------------------------------------- map
local function gen_map()
  local m = {}
  for i = 1, W * H do m[i] = WALL end
  local function carve(x0, y0, x1, y1, cost)
    for y = math.max(2, y0), math.min(H - 1, y1) do
      for x = math.max(2, x0), math.min(W - 1, x1) do
        m[(y - 1) * W + x] = cost
      end
    end
  end
  local rooms = {}
  for _ = 1, 45 do
    local w, h = rand(14) + 4, rand(10) + 3
    local x, y = rand(W - w - 2) + 1, rand(H - h - 2) + 1
    carve(x, y, x + w, y + h, 1)
    rooms[#rooms + 1] = { x = x + w // 2, y = y + h // 2 }
  end
  -- corridors between consecutive rooms (L-shaped), some of them muddy
  for i = 2, #rooms do
    local a, b = rooms[i - 1], rooms[i]
    local cost = rand(4) == 1 and 3 or 1
    carve(math.min(a.x, b.x), a.y, math.max(a.x, b.x), a.y, cost)
    carve(b.x, math.min(a.y, b.y), b.x, math.max(a.y, b.y), cost)
  end
  -- patches of rough terrain inside open space
  for _ = 1, 120 do
    local x, y = rand(W), rand(H)
    local r = rand(4)
    for yy = y - r, y + r do
      for xx = x - r, x + r do
        if xx >= 1 and xx <= W and yy >= 1 and yy <= H then
          local i = (yy - 1) * W + xx
          if m[i] ~= WALL then m[i] = 2 + rand(3) end
        end
      end
    end
  end
  return m, rooms
end

---------------------------------------------------------------- binary heap
local Heap = {}
Heap.__index = Heap

local function new_heap() return setmetatable({ keys = {}, vals = {}, n = 0 }, Heap) end

function Heap:push(key, val)
  local n = self.n + 1
  self.n = n
  local keys, vals = self.keys, self.vals
  local i = n
  while i > 1 do
    local p = i // 2
    if keys[p] <= key then break end
    keys[i], vals[i] = keys[p], vals[p]
    i = p
  end
  keys[i], vals[i] = key, val
end

function Heap:pop()
  local n = self.n
  if n == 0 then return nil end
  local keys, vals = self.keys, self.vals
  local topk, topv = keys[1], vals[1]
  local k, v = keys[n], vals[n]
  keys[n], vals[n] = nil, nil
  n = n - 1
  self.n = n
  local i = 1
  while true do
    local c = 2 * i
    if c > n then break end
    if c + 1 <= n and keys[c + 1] < keys[c] then c = c + 1 end
    if keys[c] >= k then break end
    keys[i], vals[i] = keys[c], vals[c]
    i = c
  end
  if n > 0 then keys[i], vals[i] = k, v end
  return topk, topv
end

---------------------------------------------------------------- search
local DX = { 1, -1, 0, 0, 1, 1, -1, -1 }
local DY = { 0, 0, 1, -1, 1, -1, 1, -1 }
local STEP = { 10, 10, 10, 10, 14, 14, 14, 14 }

local function octile(x0, y0, x1, y1)
  local dx, dy = math.abs(x1 - x0), math.abs(y1 - y0)
  if dx < dy then dx, dy = dy, dx end
  return 10 * (dx - dy) + 14 * dy
end

-- returns cost, parent table and number of expanded nodes (heuristic nil = Dijkstra)
local function search(m, sx, sy, gx, gy, use_h)
  local start, goal = (sy - 1) * W + sx, (gy - 1) * W + gx
  local g, parent, closed = { [start] = 0 }, {}, {}
  local open = new_heap()
  open:push(use_h and octile(sx, sy, gx, gy) or 0, start)
  local expanded = 0
  while true do
    local _, cur = open:pop()
    if not cur then return nil, parent, expanded end
    if not closed[cur] then
      closed[cur] = true
      expanded = expanded + 1
      if cur == goal and use_h then return g[cur], parent, expanded end
      local cx, cy = (cur - 1) % W + 1, (cur - 1) // W + 1
      local gc = g[cur]
      for d = 1, 8 do
        local nx, ny = cx + DX[d], cy + DY[d]
        local ni = (ny - 1) * W + nx
        local terrain = m[ni]
        if terrain and terrain ~= WALL and nx >= 1 and nx <= W
          -- no cutting corners past walls
          and (d <= 4 or (m[(cy - 1) * W + nx] ~= WALL and m[(ny - 1) * W + cx] ~= WALL)) then
          local ng = gc + STEP[d] * terrain
          local old = g[ni]
          if not old or ng < old then
            g[ni] = ng
            parent[ni] = cur
            local f = ng
            if use_h then f = ng + octile(nx, ny, gx, gy) end
            open:push(f, ni)
          end
        end
      end
    end
  end
end

local function dijkstra_all(m, sx, sy)
  local start = (sy - 1) * W + sx
  local g = { [start] = 0 }
  local closed = {}
  local open = new_heap()
  open:push(0, start)
  while true do
    local _, cur = open:pop()
    if not cur then break end
    if not closed[cur] then
      closed[cur] = true
      local cx, cy = (cur - 1) % W + 1, (cur - 1) // W + 1
      local gc = g[cur]
      for d = 1, 8 do
        local nx, ny = cx + DX[d], cy + DY[d]
        local ni = (ny - 1) * W + nx
        local terrain = m[ni]
        if terrain and terrain ~= WALL and nx >= 1 and nx <= W
          and (d <= 4 or (m[(cy - 1) * W + nx] ~= WALL and m[(ny - 1) * W + cx] ~= WALL)) then
          local ng = gc + STEP[d] * terrain
          if not g[ni] or ng < g[ni] then
            g[ni] = ng
            open:push(ng, ni)
          end
        end
      end
    end
  end
  return g
end

local function validate_path(m, parent, sx, sy, gx, gy, cost)
  local start, cur = (sy - 1) * W + sx, (gy - 1) * W + gx
  local total, steps = 0, 0
  while cur ~= start do
    local p = parent[cur]
    if not p then error("astar: broken parent chain") end
    local px, py = (p - 1) % W + 1, (p - 1) // W + 1
    local cx, cy = (cur - 1) % W + 1, (cur - 1) // W + 1
    local dx, dy = math.abs(cx - px), math.abs(cy - py)
    if dx > 1 or dy > 1 or m[cur] == WALL then error("astar: illegal step") end
    total = total + ((dx + dy == 2) and 14 or 10) * m[cur]
    steps = steps + 1
    cur = p
  end
  if total ~= cost then error(string.format("astar: path cost %d vs reported %d", total, cost)) end
  return steps
end

---------------------------------------------------------------- workload
local m, rooms = gen_map()
local queries = scaled(900)
local found, unreachable, total_cost, total_steps, total_expanded = 0, 0, 0, 0, 0
local dij_checks = 0
for q = 1, queries do
  local a, b = rooms[rand(#rooms)], rooms[rand(#rooms)]
  local sx, sy, gx, gy = a.x, a.y, b.x, b.y
  local cost, parent, expanded = search(m, sx, sy, gx, gy, true)
  total_expanded = total_expanded + expanded
  if cost then
    found = found + 1
    total_cost = total_cost + cost
    total_steps = total_steps + validate_path(m, parent, sx, sy, gx, gy, cost)
  else
    unreachable = unreachable + 1
  end
  if q % 50 == 1 then
    dij_checks = dij_checks + 1
    local all = dijkstra_all(m, sx, sy)
    if all[(gy - 1) * W + gx] ~= cost then
      error(string.format("astar: A* cost %s, Dijkstra %s", tostring(cost), tostring(all[(gy - 1) * W + gx])))
    end
  end
end
if found == 0 then error("astar: no path found at all") end

print(string.format("astar: queries=%d found=%d unreachable=%d cost=%d steps=%d expanded=%d dijkstra=%d",
  queries, found, unreachable, total_cost, total_steps, total_expanded, dij_checks))
