-- mt_parallel_map.lua (multi-threaded): data-parallel map with join. An image
-- job is split into row blocks; worker threads render Mandelbrot/Julia rows
-- (floating point, escape-time iteration) and compute per-row histograms and
-- a hash of the pixels, reading only shared immutable input and returning
-- fresh tables through join. The main thread stitches the blocks back in
-- order and reduces them; a sample of rows is recomputed sequentially and
-- compared. Run twice with different thread counts, the results must be the
-- same. Stands for: parallel-for loops, map-reduce, image/scientific kernels.
-- Tandem only (uses the thread library).
-- Usage: mt_parallel_map.lua [scale] [threads]
-- threads (default 4): the workers of the main split; the check split uses one
-- fewer and the spot checks half as many (the default: 4, 3 and 2). The output
-- does not depend on it.

local scale = tonumber(arg and arg[1]) or 1
local NTHREADS = math.tointeger(tonumber(arg and arg[2] or "4") or 0)
if not NTHREADS or NTHREADS < 1 then error("mt_parallel_map: threads must be a positive integer") end
local side = math.floor(680 * math.sqrt(scale) + 0.5)
if side < 16 then side = 16 end
local W, H = side, side
local MAXIT = 200

-- the shared read-only job description
local JOB = {
  { kind = "mandel", x0 = -2.2, x1 = 0.8, y0 = -1.3, y1 = 1.3 },
  { kind = "julia", cx = -0.8, cy = 0.156, x0 = -1.6, x1 = 1.6, y0 = -1.0, y1 = 1.0 },
}

local function render_row(job, y)
  local row = {}
  local fy = job.y0 + (job.y1 - job.y0) * y / (H - 1)
  local dx = (job.x1 - job.x0) / (W - 1)
  local julia = job.kind == "julia"
  for x = 0, W - 1 do
    local fx = job.x0 + dx * x
    local zr, zi, cr, ci
    if julia then zr, zi, cr, ci = fx, fy, job.cx, job.cy else zr, zi, cr, ci = 0.0, 0.0, fx, fy end
    local it = 0
    while it < MAXIT do
      local zr2, zi2 = zr * zr, zi * zi
      if zr2 + zi2 > 4.0 then break end
      zi = 2.0 * zr * zi + ci
      zr = zr2 - zi2 + cr
      it = it + 1
    end
    row[x + 1] = it
  end
  return row
end

local function row_summary(row)
  local h = 0
  local inside, sum = 0, 0
  for i = 1, #row do
    local v = row[i]
    h = (h * 33 + v) % 4294967296
    sum = sum + v
    if v == MAXIT then inside = inside + 1 end
  end
  return h, inside, sum
end

-- map over blocks of rows with `nthreads` threads (static block-cyclic split)
local function parallel_map(job, nthreads, block)
  local handles = {}
  for t = 1, nthreads do
    handles[t] = thread.spawn(function(first)
      local results = {}
      local y = first
      while y < H do
        for yy = y, math.min(y + block - 1, H - 1) do
          local row = render_row(job, yy)
          local h, inside, sum = row_summary(row)
          results[#results + 1] = { y = yy, hash = h, inside = inside, sum = sum }
        end
        y = y + block * nthreads
      end
      return results
    end, (t - 1) * block)
  end
  local rows = {}
  for t = 1, nthreads do
    local part = handles[t]:join()
    for _, r in ipairs(part) do
      if rows[r.y + 1] then error("mt_parallel_map: row computed twice") end
      rows[r.y + 1] = r
    end
  end
  for y = 1, H do
    if not rows[y] then error("mt_parallel_map: row " .. (y - 1) .. " missing") end
  end
  return rows
end

local function reduce(rows)
  local h, inside, sum = 0, 0, 0
  for y = 1, #rows do
    local r = rows[y]
    h = (h * 1000003 + r.hash) % 2147483647
    inside = inside + r.inside
    sum = sum + r.sum
  end
  return h, inside, sum
end

local out = {}
for j, job in ipairs(JOB) do
  local h4, in4, s4 = reduce(parallel_map(job, NTHREADS, 4))
  -- a second split with another thread count and block size (one thread: two threads)
  local h3, in3, s3 = reduce(parallel_map(job, NTHREADS > 1 and NTHREADS - 1 or 2, 7))
  if h4 ~= h3 or in4 ~= in3 or s4 ~= s3 then
    error("mt_parallel_map: result depends on the split for job " .. j)
  end
  -- sequential spot checks
  local rows = parallel_map(job, math.max(1, NTHREADS // 2), 16)
  for y = 0, H - 1, 37 do
    local hh, ii, ss = row_summary(render_row(job, y))
    local r = rows[y + 1]
    if r.hash ~= hh or r.inside ~= ii or r.sum ~= ss then
      error("mt_parallel_map: row " .. y .. " differs from the sequential result")
    end
  end
  out[#out + 1] = string.format("%s inside=%d iters=%d hash=%d", job.kind, in4, s4, h4)
end
print(string.format("mt_parallel_map: %dx%d %s", W, H, table.concat(out, " ")))
