-- havlak.lua: loop recognition on control-flow graphs, as a compiler does it.
-- A generator builds random structured CFGs (sequences, if/else diamonds, while
-- and do-while loops, nested) with a known number of loops and known maximum
-- nesting depth. Havlak's algorithm (DFS preorder, back/non-back predecessors,
-- union-find) finds the loop nesting forest; an independent pass computes
-- dominators (Cooper-Harvey-Kennedy iteration over reverse postorder) and counts
-- natural loops. Both must agree with the generator. Stands for: compiler
-- middle-ends, static analysers, graph-heavy code with union-find.
-- Usage: havlak.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 42
local function rand(n)
  -- xorshift64
  seed = seed ~ (seed << 13)
  seed = seed ~ (seed >> 7)
  seed = seed ~ (seed << 17)
  return (seed & 0x7fffffff) % n + 1
end

---------------------------------------------------------------- CFG
local function new_cfg()
  return { nodes = {}, nedges = 0 }
end

local function new_node(cfg)
  local n = { id = #cfg.nodes + 1, succ = {}, pred = {} }
  cfg.nodes[n.id] = n
  return n
end

local function edge(cfg, a, b)
  a.succ[#a.succ + 1] = b
  b.pred[#b.pred + 1] = a
  cfg.nedges = cfg.nedges + 1
end

-- structured generator; returns the exit node of the region
local MAX_LOOP_DEPTH = 8
local MAX_NEST = 24
local function gen_region(cfg, entry, budget, loop_depth, nest, info)
  local cur = entry
  while budget > 0 do
    local r = rand(10)
    if r <= 3 or nest >= MAX_NEST then
      local n = new_node(cfg)
      edge(cfg, cur, n)
      cur = n
      budget = budget - 1
    elseif r <= 5 then
      local b1 = rand(budget) - 1
      local b2 = rand(budget - b1 + 1) - 1
      budget = budget - b1 - b2 - 3
      local t, e = new_node(cfg), new_node(cfg)
      edge(cfg, cur, t)
      edge(cfg, cur, e)
      local te = gen_region(cfg, t, b1, loop_depth, nest + 1, info)
      local ee = gen_region(cfg, e, b2, loop_depth, nest + 1, info)
      local j = new_node(cfg)
      edge(cfg, te, j)
      edge(cfg, ee, j)
      cur = j
    elseif loop_depth < MAX_LOOP_DEPTH then
      local sub = rand(budget) - 1
      budget = budget - sub - 3
      local d = loop_depth + 1
      info.loops = info.loops + 1
      if d > info.max_depth then info.max_depth = d end
      if r <= 8 then -- while loop: test at the header
        local h = new_node(cfg)
        edge(cfg, cur, h)
        local b = new_node(cfg)
        edge(cfg, h, b)
        local be = gen_region(cfg, b, sub, d, nest + 1, info)
        edge(cfg, be, h)
        local x = new_node(cfg)
        edge(cfg, h, x)
        cur = x
      else -- do-while loop: test at the bottom (may be a self loop)
        local h = new_node(cfg)
        edge(cfg, cur, h)
        local be = gen_region(cfg, h, sub, d, nest + 1, info)
        edge(cfg, be, h)
        local x = new_node(cfg)
        edge(cfg, be, x)
        cur = x
      end
    else
      budget = budget - 1
    end
  end
  return cur
end

local function build_cfg(size)
  local cfg = new_cfg()
  local info = { loops = 0, max_depth = 0 }
  local start = new_node(cfg)
  local last = gen_region(cfg, start, size, 0, 0, info)
  local stop = new_node(cfg)
  edge(cfg, last, stop)
  return cfg, info
end

---------------------------------------------------------------- Havlak
local NONHEADER, REDUCIBLE, SELF, IRREDUCIBLE = 1, 2, 3, 4

local function find(uf, x)
  local root = x
  while uf[root] ~= root do root = uf[root] end
  while uf[x] ~= root do
    local nx = uf[x]
    uf[x] = root
    x = nx
  end
  return root
end

local function havlak(cfg)
  local nodes = cfg.nodes
  local nnodes = #nodes
  -- iterative DFS numbering nodes in preorder; last[w] = highest descendant number
  local number = {}   -- node id -> preorder number
  local node_of = {}  -- preorder number -> node
  local last = {}
  local count = 0
  local stack, istack = { nodes[1] }, { 0 }
  count = 1
  number[1] = 1
  node_of[1] = nodes[1]
  while #stack > 0 do
    local top = #stack
    local n = stack[top]
    local i = istack[top] + 1
    if i <= #n.succ then
      istack[top] = i
      local s = n.succ[i]
      if not number[s.id] then
        count = count + 1
        number[s.id] = count
        node_of[count] = s
        stack[top + 1] = s
        istack[top + 1] = 0
      end
    else
      last[number[n.id]] = count
      stack[top] = nil
      istack[top] = nil
    end
  end

  local back_preds, non_back_preds, types, header, uf = {}, {}, {}, {}, {}
  for w = 1, count do
    back_preds[w], non_back_preds[w] = {}, {}
    types[w] = NONHEADER
    header[w] = 1
    uf[w] = w
    local preds = node_of[w].pred
    for i = 1, #preds do
      local v = number[preds[i].id]
      if v then
        if w <= v and v <= last[w] then
          back_preds[w][#back_preds[w] + 1] = v
        else
          local nb = non_back_preds[w]
          nb[#nb + 1] = v
        end
      end
    end
  end

  local loops = {}
  local loop_of = {} -- preorder number -> innermost loop headed there
  for w = count, 1, -1 do
    local pool, in_pool, work = {}, {}, {}
    for _, v in ipairs(back_preds[w]) do
      if v ~= w then
        local f = find(uf, v)
        if not in_pool[f] then
          in_pool[f] = true
          pool[#pool + 1] = f
          work[#work + 1] = f
        end
      else
        types[w] = SELF
      end
    end
    if #pool > 0 then types[w] = REDUCIBLE end
    while #work > 0 do
      local x = work[#work]
      work[#work] = nil
      local nb = non_back_preds[x]
      for i = 1, #nb do
        local yd = find(uf, nb[i])
        if not (w <= yd and yd <= last[w]) then
          types[w] = IRREDUCIBLE
          local nbw = non_back_preds[w]
          nbw[#nbw + 1] = yd
        elseif yd ~= w and not in_pool[yd] then
          in_pool[yd] = true
          pool[#pool + 1] = yd
          work[#work + 1] = yd
        end
      end
    end
    if #pool > 0 or types[w] == SELF then
      local loop = { header = w, children = {}, nodes = 0, parent = nil, kind = types[w] }
      loops[#loops + 1] = loop
      loop_of[w] = loop
      for _, x in ipairs(pool) do
        header[x] = w
        uf[x] = w
        local inner = loop_of[x]
        if inner then
          inner.parent = loop
          loop.children[#loop.children + 1] = inner
        else
          loop.nodes = loop.nodes + 1
        end
      end
    end
  end

  -- nesting depths
  local max_depth, irreducible = 0, 0
  for _, l in ipairs(loops) do
    local d, p = 1, l.parent
    while p do d = d + 1; p = p.parent end
    if d > max_depth then max_depth = d end
    if l.kind == IRREDUCIBLE then irreducible = irreducible + 1 end
  end
  return #loops, max_depth, irreducible, count
end

---------------------------------------------------------------- dominators
local function dominators_natural_loops(cfg)
  local nodes = cfg.nodes
  -- iterative DFS postorder
  local post, order = {}, {}
  local visited = { [1] = true }
  local stack, istack = { nodes[1] }, { 0 }
  while #stack > 0 do
    local top = #stack
    local n = stack[top]
    local i = istack[top] + 1
    if i <= #n.succ then
      istack[top] = i
      local s = n.succ[i]
      if not visited[s.id] then
        visited[s.id] = true
        stack[top + 1] = s
        istack[top + 1] = 0
      end
    else
      order[#order + 1] = n
      post[n.id] = #order
      stack[top] = nil
      istack[top] = nil
    end
  end
  local idom = {}
  local start = nodes[1]
  idom[start.id] = start.id
  local function intersect(a, b)
    while a ~= b do
      while post[a] < post[b] do a = idom[a] end
      while post[b] < post[a] do b = idom[b] end
    end
    return a
  end
  local changed, passes = true, 0
  while changed do
    changed = false
    passes = passes + 1
    for i = #order - 1, 1, -1 do -- reverse postorder, skipping the start node
      local n = order[i]
      local new
      for _, p in ipairs(n.pred) do
        if idom[p.id] then
          if new then new = intersect(p.id, new) else new = p.id end
        end
      end
      if idom[n.id] ~= new then
        idom[n.id] = new
        changed = true
      end
    end
  end
  local function dominates(a, b)
    while true do
      if a == b then return true end
      local up = idom[b]
      if up == b then return false end
      b = up
    end
  end
  local headers, nheaders = {}, 0
  for _, n in ipairs(order) do
    for _, s in ipairs(n.succ) do
      if dominates(s.id, n.id) and not headers[s.id] then
        headers[s.id] = true
        nheaders = nheaders + 1
      end
    end
  end
  return nheaders, passes
end

---------------------------------------------------------------- workload
local graphs = scaled(20)
local reps = 6
local checksum, total_nodes, total_loops = 0, 0, 0
for g = 1, graphs do
  local cfg, info = build_cfg(4000)
  local nloops, depth, irr, reached
  for _ = 1, reps do
    nloops, depth, irr, reached = havlak(cfg)
  end
  if nloops ~= info.loops then
    error(string.format("havlak: graph %d: found %d loops, built %d", g, nloops, info.loops))
  end
  if depth ~= info.max_depth then
    error(string.format("havlak: graph %d: depth %d, built %d", g, depth, info.max_depth))
  end
  if irr ~= 0 then error("havlak: structured graph reported irreducible") end
  if reached ~= #cfg.nodes then error("havlak: unreachable nodes in a structured graph") end
  local natural, passes = dominators_natural_loops(cfg)
  if natural ~= nloops then
    error(string.format("havlak: graph %d: dominators give %d natural loops, havlak %d", g, natural, nloops))
  end
  total_nodes = total_nodes + #cfg.nodes
  total_loops = total_loops + nloops
  checksum = (checksum * 1000003 + nloops * 131 + depth * 17 + cfg.nedges + passes) % 2147483647
end

-- an irreducible graph: two entries into a cycle
do
  local cfg = new_cfg()
  local a, b, c, d = new_node(cfg), new_node(cfg), new_node(cfg), new_node(cfg)
  edge(cfg, a, b); edge(cfg, a, c); edge(cfg, b, c); edge(cfg, c, b); edge(cfg, c, d)
  local n, _, irr = havlak(cfg)
  if n ~= 1 or irr ~= 1 then error("havlak: irreducible loop not detected") end
end

print(string.format("havlak: graphs=%d nodes=%d loops=%d checksum=%d", graphs, total_nodes, total_loops, checksum))
