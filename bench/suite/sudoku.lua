-- sudoku.lua: a constraint solver. Sudoku grids hold candidate sets as 9-bit
-- masks; assignment propagates eliminations to peers and places hidden singles
-- (arc consistency), and search branches on the cell with the fewest candidates.
-- The workload generates puzzles the way a puzzle generator does: fill a random
-- complete grid, then remove givens one by one while a solution counter proves
-- the solution stays unique. N-queens (bitboard backtracking) with known counts
-- is a second, smaller constraint problem. Stands for: schedulers, configurators,
-- SAT/CSP-style search with propagation.
-- Usage: sudoku.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 987654321
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed >> 8) % n + 1
end

---------------------------------------------------------------- tables
local ALL = 0x3FE -- bits 1..9
local POP, LOW = {}, {}
for m = 0, 1023 do
  local c, low = 0, 0
  for d = 9, 1, -1 do
    if m & (1 << d) ~= 0 then c = c + 1; low = d end
  end
  POP[m], LOW[m] = c, low
end

local UNITS = {}     -- 27 units, each a list of 9 cells
local CELL_UNITS = {} -- cell -> its 3 units
local PEERS = {}      -- cell -> list of 20 peers
for r = 0, 8 do
  local row, col = {}, {}
  for c = 0, 8 do
    row[#row + 1] = r * 9 + c + 1
    col[#col + 1] = c * 9 + r + 1
  end
  UNITS[#UNITS + 1] = row
  UNITS[#UNITS + 1] = col
end
for br = 0, 2 do
  for bc = 0, 2 do
    local box = {}
    for r = 0, 2 do
      for c = 0, 2 do box[#box + 1] = (br * 3 + r) * 9 + bc * 3 + c + 1 end
    end
    UNITS[#UNITS + 1] = box
  end
end
for cell = 1, 81 do
  CELL_UNITS[cell] = {}
  local seen, peers = {}, {}
  for _, u in ipairs(UNITS) do
    for _, x in ipairs(u) do
      if x == cell then
        CELL_UNITS[cell][#CELL_UNITS[cell] + 1] = u
        for _, y in ipairs(u) do
          if y ~= cell and not seen[y] then seen[y] = true; peers[#peers + 1] = y end
        end
      end
    end
  end
  PEERS[cell] = peers
end

---------------------------------------------------------------- propagation
local stats = { assigns = 0, nodes = 0 }
local assign

local function eliminate(g, cell, d)
  local bit = 1 << d
  local m = g[cell]
  if m & bit == 0 then return true end
  m = m & ~bit
  g[cell] = m
  if m == 0 then return false end
  if POP[m] == 1 then
    local d2 = LOW[m]
    local peers = PEERS[cell]
    for i = 1, 20 do
      if not eliminate(g, peers[i], d2) then return false end
    end
  end
  -- hidden single: d has one place left in a unit of cell
  local units = CELL_UNITS[cell]
  for u = 1, 3 do
    local unit = units[u]
    local place, n = nil, 0
    for i = 1, 9 do
      if g[unit[i]] & bit ~= 0 then
        n = n + 1
        place = unit[i]
        if n > 1 then break end
      end
    end
    if n == 0 then return false end
    if n == 1 and g[place] ~= bit then
      if not assign(g, place, d) then return false end
    end
  end
  return true
end

function assign(g, cell, d)
  stats.assigns = stats.assigns + 1
  local others = g[cell] & ~(1 << d)
  while others ~= 0 do
    local d2 = LOW[others]
    others = others & ~(1 << d2)
    if not eliminate(g, cell, d2) then return false end
  end
  return true
end

local function copy(g)
  local c = {}
  for i = 1, 81 do c[i] = g[i] end
  return c
end

local function from_givens(givens)
  local g = {}
  for i = 1, 81 do g[i] = ALL end
  for i = 1, 81 do
    local d = givens[i]
    if d ~= 0 and not assign(g, i, d) then return nil end
  end
  return g
end

-- depth-first search; calls on_solution(grid) and stops when it returns true
local function search(g, on_solution, order)
  stats.nodes = stats.nodes + 1
  local best, bestn = nil, 10
  for i = 1, 81 do
    local n = POP[g[i]]
    if n > 1 and n < bestn then
      best, bestn = i, n
      if n == 2 then break end
    end
  end
  if not best then return on_solution(g) end
  local m = g[best]
  local digits = {}
  for d = 1, 9 do
    if m & (1 << d) ~= 0 then digits[#digits + 1] = d end
  end
  if order then -- shuffle for random fills
    for i = #digits, 2, -1 do
      local j = rand(i)
      digits[i], digits[j] = digits[j], digits[i]
    end
  end
  for _, d in ipairs(digits) do
    local g2 = copy(g)
    if assign(g2, best, d) then
      if search(g2, on_solution, order) then return true end
    end
  end
  return false
end

local function count_solutions(givens, limit)
  local g = from_givens(givens)
  if not g then return 0 end
  local n = 0
  search(g, function() n = n + 1; return n >= limit end)
  return n
end

local function solve(givens)
  local g = from_givens(givens)
  local sol
  if g then
    search(g, function(s) sol = s; return true end)
  end
  if not sol then return nil end
  local digits = {}
  for i = 1, 81 do digits[i] = LOW[sol[i]] end
  return digits
end

local function valid_solution(d)
  for _, u in ipairs(UNITS) do
    local seen = 0
    for i = 1, 9 do seen = seen | (1 << d[u[i]]) end
    if seen ~= ALL then return false end
  end
  return true
end

---------------------------------------------------------------- generator
local function random_full_grid()
  local g = {}
  for i = 1, 81 do g[i] = ALL end
  local full
  search(g, function(s) full = s; return true end, true)
  local digits = {}
  for i = 1, 81 do digits[i] = LOW[full[i]] end
  return digits
end

local function make_puzzle(max_tries)
  local solution = random_full_grid()
  if not valid_solution(solution) then error("sudoku: generated grid is invalid") end
  local givens = {}
  for i = 1, 81 do givens[i] = solution[i] end
  local cells = {}
  for i = 1, 81 do cells[i] = i end
  for i = 81, 2, -1 do
    local j = rand(i)
    cells[i], cells[j] = cells[j], cells[i]
  end
  local tries = 0
  for _, c in ipairs(cells) do
    if tries >= max_tries then break end
    tries = tries + 1
    local keep = givens[c]
    givens[c] = 0
    if count_solutions(givens, 2) ~= 1 then givens[c] = keep end
  end
  return givens, solution
end

---------------------------------------------------------------- N-queens
local function queens(n)
  local full = (1 << n) - 1
  local function place(cols, d1, d2)
    if cols == full then return 1 end
    local count = 0
    local avail = full & ~(cols | d1 | d2)
    while avail ~= 0 do
      local bit = avail & -avail
      avail = avail ~ bit
      count = count + place(cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1)
    end
    return count
  end
  return place(0, 0, 0)
end

---------------------------------------------------------------- workload
local puzzles = scaled(100)
local checksum, total_givens = 0, 0
for p = 1, puzzles do
  local givens, solution = make_puzzle(81)
  local ng = 0
  for i = 1, 81 do if givens[i] ~= 0 then ng = ng + 1 end end
  total_givens = total_givens + ng
  if count_solutions(givens, 2) ~= 1 then error("sudoku: puzzle " .. p .. " is not unique") end
  local sol = solve(givens)
  if not sol or not valid_solution(sol) then error("sudoku: puzzle " .. p .. " unsolved") end
  for i = 1, 81 do
    if sol[i] ~= solution[i] then error("sudoku: puzzle " .. p .. " solved differently") end
  end
  for i = 1, 9 do checksum = (checksum * 10 + sol[i]) % 1000000007 end
  checksum = (checksum + ng) % 1000000007
end

local QUEENS = { [6] = 4, [7] = 40, [8] = 92, [9] = 352, [10] = 724 }
local qn = 0
for n = 6, 10 do
  local c = queens(n)
  if c ~= QUEENS[n] then error(string.format("sudoku: %d-queens gave %d", n, c)) end
  qn = qn + c
end

print(string.format("sudoku: puzzles=%d givens=%d assigns=%d nodes=%d queens=%d checksum=%d",
  puzzles, total_givens, stats.assigns, stats.nodes, qn, checksum))
