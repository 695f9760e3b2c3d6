-- physics.lua: a game-style physics step. A cloth of particles joined by
-- distance constraints (Verlet integration, iterative constraint relaxation,
-- pinned corners, gravity, gusts of wind, a spherical obstacle) and a box of
-- bouncing balls with ball-ball collisions found through a spatial hash grid.
-- Checks that constraints stay satisfied, balls stay in the box, and momentum
-- bookkeeping adds up, then prints a checksum of the final positions.
-- Stands for: game engines, simulations, particle systems.
-- Usage: physics.lua [scale]   (scale multiplies the number of time steps)

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end
local sqrt, floor, abs = math.sqrt, math.floor, math.abs

local seed = 31337
local function rand01()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end

---------------------------------------------------------------- cloth
local Cloth = {}
Cloth.__index = Cloth

local function new_cloth(w, h, spacing)
  local c = setmetatable({ w = w, h = h, points = {}, links = {} }, Cloth)
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local px, py, pz = x * spacing, 0.0, y * spacing
      c.points[#c.points + 1] = { x = px, y = py, z = pz, ox = px, oy = py, oz = pz,
        pinned = (y == 0 and (x == 0 or x == w - 1 or x == w // 2)) }
    end
  end
  local function idx(x, y) return y * w + x + 1 end
  local function link(a, b)
    local pa, pb = c.points[a], c.points[b]
    local dx, dy, dz = pa.x - pb.x, pa.y - pb.y, pa.z - pb.z
    c.links[#c.links + 1] = { a = pa, b = pb, rest = sqrt(dx * dx + dy * dy + dz * dz) }
  end
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      if x < w - 1 then link(idx(x, y), idx(x + 1, y)) end
      if y < h - 1 then link(idx(x, y), idx(x, y + 1)) end
      if x < w - 1 and y < h - 1 then link(idx(x, y), idx(x + 1, y + 1)) end -- shear
    end
  end
  return c
end

function Cloth:step(dt, gravity, wind)
  local damping = 0.99
  local pts = self.points
  for i = 1, #pts do
    local p = pts[i]
    if not p.pinned then
      local vx = (p.x - p.ox) * damping
      local vy = (p.y - p.oy) * damping
      local vz = (p.z - p.oz) * damping
      p.ox, p.oy, p.oz = p.x, p.y, p.z
      p.x = p.x + vx + wind * dt * dt
      p.y = p.y + vy + wind * 0.3 * dt * dt
      p.z = p.z + vz + gravity * dt * dt
    end
  end
  local links = self.links
  for _ = 1, 6 do
    for i = 1, #links do
      local l = links[i]
      local a, b = l.a, l.b
      local dx, dy, dz = b.x - a.x, b.y - a.y, b.z - a.z
      local d = sqrt(dx * dx + dy * dy + dz * dz)
      if d > 0 then
        local diff = (d - l.rest) / d
        local wa = a.pinned and 0 or 0.5
        local wb = b.pinned and 0 or 0.5
        if wa + wb > 0 then
          local k = diff / (wa + wb)
          a.x = a.x + dx * k * wa; a.y = a.y + dy * k * wa; a.z = a.z + dz * k * wa
          b.x = b.x - dx * k * wb; b.y = b.y - dy * k * wb; b.z = b.z - dz * k * wb
        end
      end
    end
    -- spherical obstacle
    local cx, cy, cz, r = 1.0, 0.3, 1.4, 0.5
    for i = 1, #pts do
      local p = pts[i]
      local dx, dy, dz = p.x - cx, p.y - cy, p.z - cz
      local d2 = dx * dx + dy * dy + dz * dz
      if d2 < r * r and d2 > 0 then
        local d = sqrt(d2)
        local k = r / d
        p.x, p.y, p.z = cx + dx * k, cy + dy * k, cz + dz * k
      end
    end
  end
end

function Cloth:max_stretch()
  local worst = 0
  for _, l in ipairs(self.links) do
    local a, b = l.a, l.b
    local dx, dy, dz = b.x - a.x, b.y - a.y, b.z - a.z
    local s = sqrt(dx * dx + dy * dy + dz * dz) / l.rest
    if s > worst then worst = s end
  end
  return worst
end

---------------------------------------------------------------- balls
local BOX = 20.0

local function new_balls(n)
  local balls = {}
  for i = 1, n do
    balls[i] = { x = 1 + rand01() * (BOX - 2), y = 1 + rand01() * (BOX - 2),
      vx = rand01() * 4 - 2, vy = rand01() * 4 - 2, r = 0.15 + rand01() * 0.2 }
    balls[i].m = balls[i].r * balls[i].r
  end
  return balls
end

local CELL = 1.0
local function step_balls(balls, dt, stats)
  -- integrate and bounce off the walls
  for i = 1, #balls do
    local b = balls[i]
    b.vy = b.vy - 9.81 * dt * 0.1
    b.x = b.x + b.vx * dt
    b.y = b.y + b.vy * dt
    if b.x < b.r then b.x = b.r; b.vx = -b.vx; stats.walls = stats.walls + 1 end
    if b.x > BOX - b.r then b.x = BOX - b.r; b.vx = -b.vx; stats.walls = stats.walls + 1 end
    if b.y < b.r then b.y = b.r; b.vy = -b.vy; stats.walls = stats.walls + 1 end
    if b.y > BOX - b.r then b.y = BOX - b.r; b.vy = -b.vy; stats.walls = stats.walls + 1 end
  end
  -- spatial hash: integer cell key -> list of balls
  local grid = {}
  for i = 1, #balls do
    local b = balls[i]
    local key = floor(b.x / CELL) * 1000 + floor(b.y / CELL)
    local cell = grid[key]
    if not cell then cell = {}; grid[key] = cell end
    cell[#cell + 1] = i
  end
  for i = 1, #balls do
    local a = balls[i]
    local cx, cy = floor(a.x / CELL), floor(a.y / CELL)
    for gx = cx - 1, cx + 1 do
      for gy = cy - 1, cy + 1 do
        local cell = grid[gx * 1000 + gy]
        if cell then
          for k = 1, #cell do
            local j = cell[k]
            if j > i then
              local b = balls[j]
              local dx, dy = b.x - a.x, b.y - a.y
              local d2 = dx * dx + dy * dy
              local rr = a.r + b.r
              if d2 < rr * rr and d2 > 1e-12 then
                stats.hits = stats.hits + 1
                local d = sqrt(d2)
                local nx, ny = dx / d, dy / d
                local rel = (b.vx - a.vx) * nx + (b.vy - a.vy) * ny
                if rel < 0 then
                  -- elastic impulse
                  local imp = 2 * rel / (a.m + b.m)
                  a.vx = a.vx + imp * b.m * nx; a.vy = a.vy + imp * b.m * ny
                  b.vx = b.vx - imp * a.m * nx; b.vy = b.vy - imp * a.m * ny
                end
                -- separate the overlap
                local push = (rr - d) / 2
                a.x = a.x - nx * push; a.y = a.y - ny * push
                b.x = b.x + nx * push; b.y = b.y + ny * push
              end
            end
          end
        end
      end
    end
  end

  -- separation may push a ball through a wall: clamp again
  for i = 1, #balls do
    local b = balls[i]
    if b.x < b.r then b.x = b.r elseif b.x > BOX - b.r then b.x = BOX - b.r end
    if b.y < b.r then b.y = b.r elseif b.y > BOX - b.r then b.y = BOX - b.r end
  end
end

local function kinetic(balls)
  local e = 0
  for _, b in ipairs(balls) do e = e + 0.5 * b.m * (b.vx * b.vx + b.vy * b.vy) end
  return e
end

---------------------------------------------------------------- workload
local steps = scaled(400)
local cloth = new_cloth(28, 28, 0.1)
local balls = new_balls(700)
local stats = { walls = 0, hits = 0 }
local dt = 0.016
local e0 = kinetic(balls)
local max_stretch = 0
for s = 1, steps do
  local wind = (rand01() - 0.5) * 4
  cloth:step(dt, -9.81, wind)
  step_balls(balls, dt, stats)
  if s % 50 == 0 then
    local st = cloth:max_stretch()
    if st > max_stretch then max_stretch = st end
  end
end

-- checks
for _, b in ipairs(balls) do
  if b.x < b.r - 1e-9 or b.x > BOX - b.r + 1e-9 or b.y < b.r - 1e-9 or b.y > BOX - b.r + 1e-9 then
    error("physics: a ball left the box")
  end
  if b.x ~= b.x or b.vx ~= b.vx then error("physics: NaN") end
end
if max_stretch > 2.0 or cloth:max_stretch() > 2.0 then error("physics: cloth over-stretched " .. cloth:max_stretch()) end
for _, p in ipairs(cloth.points) do
  if p.pinned and (p.y ~= 0 or p.z ~= 0) then error("physics: pinned point moved") end
  local dx, dy, dz = p.x - 1.0, p.y - 0.3, p.z - 1.4
  if dx * dx + dy * dy + dz * dz < 0.5 * 0.5 - 1e-6 and steps >= 10 then
    -- a later link relaxation may pull a point slightly inside; it must not be deep inside
    if dx * dx + dy * dy + dz * dz < 0.3 * 0.3 then error("physics: cloth went through the obstacle") end
  end
end
local e1 = kinetic(balls)
if not (e1 > 0 and e1 < e0 * 50) then error("physics: energy blew up") end

local sum = 0
for _, p in ipairs(cloth.points) do
  sum = (sum * 7 + floor(p.x * 1000) + floor(p.z * 1000) * 3) % 1000000007
end
for _, b in ipairs(balls) do
  sum = (sum * 7 + floor(b.x * 1000) + floor(b.y * 1000) * 3) % 1000000007
end
print(string.format("physics: steps=%d walls=%d hits=%d stretch=%.4f energy=%.6f checksum=%d",
  steps, stats.walls, stats.hits, max_stretch, e1, sum))
