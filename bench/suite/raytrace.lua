-- raytrace.lua: a Whitted-style ray tracer with spheres and a checkered plane,
-- point lights, shadows, specular highlights and recursive reflection, written
-- with a small vector class (metatables, operator overloading). The image is
-- reduced to a checksum instead of a file. Stands for: rendering, geometry and
-- other floating-point heavy object-oriented code.
-- Usage: raytrace.lua [scale]   (scale multiplies the number of pixels)

local scale = tonumber(arg and arg[1]) or 1
local sqrt, floor, max, min = math.sqrt, math.floor, math.max, math.min

---------------------------------------------------------------- vectors
local Vec = {}
Vec.__index = Vec

local function vec(x, y, z) return setmetatable({ x = x, y = y, z = z }, Vec) end

function Vec.__add(a, b) return vec(a.x + b.x, a.y + b.y, a.z + b.z) end
function Vec.__sub(a, b) return vec(a.x - b.x, a.y - b.y, a.z - b.z) end
function Vec.__mul(a, b)
  if type(a) == "number" then return vec(a * b.x, a * b.y, a * b.z) end
  if type(b) == "number" then return vec(a.x * b, a.y * b, a.z * b) end
  return vec(a.x * b.x, a.y * b.y, a.z * b.z) -- component-wise (colors)
end
function Vec.__unm(a) return vec(-a.x, -a.y, -a.z) end
function Vec.dot(a, b) return a.x * b.x + a.y * b.y + a.z * b.z end
function Vec.cross(a, b)
  return vec(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
end
function Vec.length(a) return sqrt(a.x * a.x + a.y * a.y + a.z * a.z) end
function Vec.norm(a)
  local l = a:length()
  if l == 0 then return a end
  return vec(a.x / l, a.y / l, a.z / l)
end

---------------------------------------------------------------- scene objects
local Sphere = {}
Sphere.__index = Sphere

local function sphere(center, radius, surface)
  return setmetatable({ center = center, r2 = radius * radius, surface = surface }, Sphere)
end

function Sphere:intersect(orig, dir)
  local oc = self.center - orig
  local b = oc:dot(dir)
  if b < 0 then return nil end
  local d2 = oc:dot(oc) - b * b
  if d2 > self.r2 then return nil end
  local h = sqrt(self.r2 - d2)
  local t = b - h
  if t < 1e-6 then t = b + h end
  if t < 1e-6 then return nil end
  return t
end

function Sphere:normal(p) return (p - self.center):norm() end

local Plane = {}
Plane.__index = Plane

local function plane(n, offset, surface)
  return setmetatable({ n = n, offset = offset, surface = surface }, Plane)
end

function Plane:intersect(orig, dir)
  local denom = self.n:dot(dir)
  if denom > -1e-9 then return nil end
  local t = (self.n:dot(orig) + self.offset) / -denom
  if t < 1e-6 then return nil end
  return t
end

function Plane:normal(_) return self.n end

-- surfaces: functions of the hit point giving diffuse, specular, reflect, roughness
local function shiny(_)
  return vec(1, 1, 1), vec(0.5, 0.5, 0.5), 0.7, 250
end
local function matte(color)
  return function(_) return color, vec(0.1, 0.1, 0.1), 0.05, 20 end
end
local function checkerboard(p)
  if (floor(p.z) + floor(p.x)) % 2 ~= 0 then
    return vec(1, 1, 1), vec(1, 1, 1), 0.1, 150
  end
  return vec(0.02, 0.02, 0.02), vec(1, 1, 1), 0.7, 150
end

local scene = {
  things = {
    plane(vec(0, 1, 0), 0, checkerboard),
    sphere(vec(0, 1, -0.25), 1, shiny),
    sphere(vec(-1, 0.5, 1.5), 0.5, shiny),
    sphere(vec(1.6, 0.6, 0.4), 0.6, matte(vec(0.9, 0.2, 0.2))),
    sphere(vec(-2.2, 0.8, -1.5), 0.8, matte(vec(0.2, 0.8, 0.3))),
    sphere(vec(0.8, 0.3, 2.2), 0.3, matte(vec(0.2, 0.3, 0.9))),
  },
  lights = {
    { pos = vec(-2, 2.5, 0), color = vec(0.49, 0.07, 0.07) },
    { pos = vec(1.5, 2.5, 1.5), color = vec(0.07, 0.07, 0.49) },
    { pos = vec(1.5, 2.5, -1.5), color = vec(0.07, 0.49, 0.071) },
    { pos = vec(0, 3.5, 0), color = vec(0.21, 0.21, 0.35) },
  },
}

local MAX_DEPTH = 5
local BLACK = vec(0, 0, 0)
local BACKGROUND = vec(0, 0, 0)

local function closest_hit(orig, dir)
  local best_t, best = math.huge, nil
  local things = scene.things
  for i = 1, #things do
    local t = things[i]:intersect(orig, dir)
    if t and t < best_t then best_t, best = t, things[i] end
  end
  return best, best_t
end

local stats = { rays = 0, shadow = 0 }

local trace

local function shade(thing, pos, dir, depth)
  local n = thing:normal(pos)
  local reflect_dir = dir - (2 * n:dot(dir)) * n
  local diffuse, specular, reflect, rough = thing.surface(pos)
  local color = BLACK
  for _, light in ipairs(scene.lights) do
    local ldis = light.pos - pos
    local dist = ldis:length()
    local ldir = ldis:norm()
    stats.shadow = stats.shadow + 1
    local blocker, bt = closest_hit(pos, ldir)
    if not blocker or bt > dist then
      local illum = ldir:dot(n)
      if illum > 0 then
        color = color + illum * (light.color * diffuse)
      end
      local spec = ldir:dot(reflect_dir:norm())
      if spec > 0 then
        color = color + (spec ^ rough) * (light.color * specular)
      end
    end
  end
  if depth < MAX_DEPTH and reflect > 0 then
    local rc = trace(pos + 0.001 * reflect_dir, reflect_dir, depth + 1)
    color = color + reflect * rc
  end
  return color
end

function trace(orig, dir, depth)
  stats.rays = stats.rays + 1
  local thing, t = closest_hit(orig, dir)
  if not thing then return BACKGROUND end
  return shade(thing, orig + t * dir, dir, depth)
end

---------------------------------------------------------------- camera and render
local function camera(pos, look_at)
  local forward = (look_at - pos):norm()
  local down = vec(0, -1, 0)
  local right = 1.5 * forward:cross(down):norm()
  local up = 1.5 * forward:cross(right):norm()
  return { pos = pos, forward = forward, right = right, up = up }
end

local function to_byte(c)
  local v = floor(min(c, 1) * 255)
  if v < 0 then v = 0 end
  return v
end

local function render(w, h)
  local cam = camera(vec(3, 2, 4), vec(-1, 0.5, 0))
  local sum, hash = 0, 0
  local hist = { 0, 0, 0, 0 }
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local rx = (x - w / 2) / 2 / w
      local ry = -(y - h / 2) / 2 / h
      local dir = (cam.forward + (rx * cam.right + ry * cam.up)):norm()
      local c = trace(cam.pos, dir, 0)
      local r, g, b = to_byte(c.x), to_byte(c.y), to_byte(c.z)
      sum = sum + r + g + b
      hash = (hash * 16777619 ~ (r << 16 | g << 8 | b)) & 0xffffffff
      local lum = (r + g + b) // 192 + 1
      hist[lum] = hist[lum] + 1
    end
  end
  return sum, hash, hist
end

local side = floor(190 * sqrt(scale) + 0.5)
if side < 8 then side = 8 end
local sum, hash, hist = render(side, side)

-- sanity: known geometry
local t = sphere(vec(0, 0, -5), 1, shiny):intersect(vec(0, 0, 0), vec(0, 0, -1))
if t ~= 4 then error("raytrace: sphere intersection gave " .. tostring(t)) end
if hist[1] + hist[2] + hist[3] + hist[4] ~= side * side then error("raytrace: pixel count") end
if stats.rays < side * side then error("raytrace: too few rays") end
-- the checkered floor, the spheres and the black sky must all be visible
if hist[1] == 0 or hist[2] == 0 or hist[3] == 0 then
  error("raytrace: degenerate image " .. table.concat(hist, ","))
end

-- reference values (from lua5.4) for the default and the small test size
local expected = { [190] = { 3707839, 0x7e53a725 }, [60] = { 372986, 0x41736941 } }
local want = expected[side]
if want and (want[1] ~= sum or want[2] ~= hash) then
  error(string.format("raytrace: checksum mismatch sum=%d hash=%08x", sum, hash))
end
print(string.format("raytrace: %dx%d rays=%d shadow=%d sum=%d hash=%08x hist=%s",
  side, side, stats.rays, stats.shadow, sum, hash, table.concat(hist, ",")))
