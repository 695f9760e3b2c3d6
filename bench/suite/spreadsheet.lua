-- spreadsheet.lua: a spreadsheet recalculation engine. Formulas such as
-- "=SUM(A1:A9)*2 + IF(B3>C3, B3, C3)" are tokenized, parsed and compiled to
-- Lua closures; references form a dependency graph; editing a cell marks its
-- transitive dependents dirty and recomputes them in topological order, with
-- cycle detection. After a long series of edits the incrementally maintained
-- values must equal a full recomputation from scratch. Stands for:
-- spreadsheets, build systems, reactive UI frameworks, incremental computation.
-- Usage: spreadsheet.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 99991
local function rand(n)
  seed = (seed * 16807) % 2147483647
  return seed % n + 1
end

---------------------------------------------------------------- cell names
local function col_name(c) -- 1 -> A, 27 -> AA
  local s = ""
  while c > 0 do
    local r = (c - 1) % 26
    s = string.char(65 + r) .. s
    c = (c - 1) // 26
  end
  return s
end

local function parse_ref(s)
  local letters, digits = s:match("^(%u+)(%d+)$")
  if not letters then return nil end
  local c = 0
  for i = 1, #letters do c = c * 26 + (letters:byte(i) - 64) end
  return c, tonumber(digits)
end

---------------------------------------------------------------- formula compiler
local function tokenize(src)
  local toks, pos = {}, 1
  while pos <= #src do
    local c = src:sub(pos, pos)
    if c:match("%s") then
      pos = pos + 1
    else
      local s, e = src:find("^%u+%d+:%u+%d+", pos)
      if s then
        toks[#toks + 1] = { k = "range", v = src:sub(s, e) }
      else
        s, e = src:find("^%u+%d+", pos)
        if s then
          toks[#toks + 1] = { k = "ref", v = src:sub(s, e) }
        else
          s, e = src:find("^%u+", pos)
          if s then
            toks[#toks + 1] = { k = "func", v = src:sub(s, e) }
          else
            s, e = src:find("^%d+%.?%d*", pos)
            if s then
              toks[#toks + 1] = { k = "num", v = tonumber(src:sub(s, e)) }
            else
              s, e = src:find("^[<>]=?", pos)
              if not s then s, e = src:find("^[-+*/(),=]", pos) end
              if not s then error("spreadsheet: bad character '" .. c .. "' in " .. src) end
              toks[#toks + 1] = { k = src:sub(s, e) }
            end
          end
        end
      end
      pos = e + 1
    end
  end
  toks[#toks + 1] = { k = "eof" }
  return toks
end

local FUNCS = {
  SUM = function(vals) local s = 0; for i = 1, #vals do s = s + vals[i] end; return s end,
  MAX = function(vals) local m = vals[1]; for i = 2, #vals do if vals[i] > m then m = vals[i] end end; return m end,
  MIN = function(vals) local m = vals[1]; for i = 2, #vals do if vals[i] < m then m = vals[i] end end; return m end,
  AVG = function(vals) local s = 0; for i = 1, #vals do s = s + vals[i] end; return s / #vals end,
  ABS = function(vals) return math.abs(vals[1]) end,
}

-- compile returns a closure get -> value, and the list of referenced cells
local function compile(src, sheet)
  local toks, i = tokenize(src), 1
  local deps, seen = {}, {}
  local function dep(name)
    if not seen[name] then seen[name] = true; deps[#deps + 1] = name end
  end
  local function peek() return toks[i].k end
  local function take(k)
    local t = toks[i]
    if k and t.k ~= k then error("spreadsheet: expected " .. k .. " in " .. src) end
    i = i + 1
    return t
  end
  local expr
  local function args()
    -- list of closures each returning a list of values (ranges expand)
    local list = {}
    take("(")
    repeat
      if peek() == "range" then
        local t = take()
        local a, b = t.v:match("^(%u+%d+):(%u+%d+)$")
        local c1, r1 = parse_ref(a)
        local c2, r2 = parse_ref(b)
        local names = {}
        for c = math.min(c1, c2), math.max(c1, c2) do
          for r = math.min(r1, r2), math.max(r1, r2) do
            local n = col_name(c) .. r
            names[#names + 1] = n
            dep(n)
          end
        end
        list[#list + 1] = function(out)
          local vals = sheet.values
          for k = 1, #names do out[#out + 1] = vals[names[k]] or 0 end
        end
      else
        local e = expr()
        list[#list + 1] = function(out) out[#out + 1] = e() end
      end
    until not (peek() == "," and take(","))
    take(")")
    return list
  end
  local function primary()
    local t = take()
    if t.k == "num" then
      local v = t.v
      return function() return v end
    elseif t.k == "ref" then
      local name = t.v
      dep(name)
      local vals = sheet.values
      return function() return vals[name] or 0 end
    elseif t.k == "func" then
      if t.v == "IF" then
        take("(")
        local cond = expr()
        take(",")
        local a = expr()
        take(",")
        local b = expr()
        take(")")
        return function() if cond() ~= 0 then return a() else return b() end end
      end
      local f = FUNCS[t.v]
      if not f then error("spreadsheet: unknown function " .. t.v) end
      local list = args()
      return function()
        local vals = {}
        for k = 1, #list do list[k](vals) end
        return f(vals)
      end
    elseif t.k == "(" then
      local e = expr()
      take(")")
      return e
    elseif t.k == "-" then
      local e = primary()
      return function() return -e() end
    end
    error("spreadsheet: unexpected token " .. t.k .. " in " .. src)
  end
  local function term()
    local l = primary()
    while peek() == "*" or peek() == "/" do
      local op = take().k
      local a, b = l, primary()
      if op == "*" then l = function() return a() * b() end
      else l = function() local d = b(); if d == 0 then return 0 end; return a() / d end end
    end
    return l
  end
  local function arith()
    local l = term()
    while peek() == "+" or peek() == "-" do
      local op = take().k
      local a, b = l, term()
      if op == "+" then l = function() return a() + b() end
      else l = function() return a() - b() end end
    end
    return l
  end
  function expr()
    local l = arith()
    local op = peek()
    if op == "<" or op == ">" or op == "<=" or op == ">=" or op == "=" then
      take()
      local a, b = l, arith()
      if op == "<" then return function() return a() < b() and 1 or 0 end
      elseif op == ">" then return function() return a() > b() and 1 or 0 end
      elseif op == "<=" then return function() return a() <= b() and 1 or 0 end
      elseif op == ">=" then return function() return a() >= b() and 1 or 0 end
      else return function() return a() == b() and 1 or 0 end end
    end
    return l
  end
  local f = expr()
  take("eof")
  return f, deps
end

---------------------------------------------------------------- sheet
local Sheet = {}
Sheet.__index = Sheet

local function new_sheet()
  return setmetatable({ values = {}, formulas = {}, deps = {}, users = {}, recomputed = 0 }, Sheet)
end

function Sheet:unlink(name)
  local old = self.deps[name]
  if old then
    for _, d in ipairs(old) do self.users[d][name] = nil end
  end
  self.deps[name] = nil
end

-- evaluation order for the dirty set: depth-first postorder over users,
-- reversed; a node met again while on the stack is a cycle
function Sheet:dirty_order(roots)
  local state, order, cyclic = {}, {}, {}
  local function visit(n)
    local st = state[n]
    if st == 2 then return end
    if st == 1 then cyclic[n] = true; return end
    state[n] = 1
    local us = self.users[n]
    if us then
      local list = {}
      for u in pairs(us) do list[#list + 1] = u end
      table.sort(list)
      for _, u in ipairs(list) do visit(u) end
    end
    state[n] = 2
    order[#order + 1] = n
  end
  for _, r in ipairs(roots) do visit(r) end
  local out = {}
  for k = #order, 1, -1 do out[#out + 1] = order[k] end
  return out, cyclic
end

function Sheet:recompute(names)
  local order, cyclic = self:dirty_order(names)
  local bad = next(cyclic) ~= nil
  for _, n in ipairs(order) do
    local f = self.formulas[n]
    if f then
      if bad and cyclic[n] then
        self.values[n] = 0
      else
        self.values[n] = f()
      end
      self.recomputed = self.recomputed + 1
    end
  end
  return bad
end

function Sheet:set(name, content)
  self:unlink(name)
  if type(content) == "string" and content:sub(1, 1) == "=" then
    local f, deps = compile(content:sub(2), self)
    self.formulas[name] = f
    self.deps[name] = deps
    for _, d in ipairs(deps) do
      local us = self.users[d]
      if not us then us = {}; self.users[d] = us end
      us[name] = true
    end
  else
    self.formulas[name] = nil
    self.values[name] = content
  end
  return self:recompute({ name })
end

-- recompute everything from scratch, in dependency order (Kahn's algorithm)
function Sheet:full_recalc()
  local indeg, names = {}, {}
  for n in pairs(self.formulas) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do
    local k = 0
    for _, d in ipairs(self.deps[n]) do if self.formulas[d] then k = k + 1 end end
    indeg[n] = k
  end
  local queue, head = {}, 1
  for _, n in ipairs(names) do if indeg[n] == 0 then queue[#queue + 1] = n end end
  local saved = self.values
  local done = 0
  while head <= #queue do
    local n = queue[head]
    head = head + 1
    saved[n] = self.formulas[n]()
    done = done + 1
    local us = self.users[n]
    if us then
      local list = {}
      for u in pairs(us) do list[#list + 1] = u end
      table.sort(list)
      for _, u in ipairs(list) do
        if indeg[u] then
          indeg[u] = indeg[u] - 1
          if indeg[u] == 0 then queue[#queue + 1] = u end
        end
      end
    end
  end
  return done == #names
end

---------------------------------------------------------------- workload
local ROWS = 300
local sheet = new_sheet()
for r = 1, ROWS do
  sheet:set("A" .. r, rand(1000))
  sheet:set("B" .. r, rand(100))
end
-- derived columns
for r = 1, ROWS do
  sheet:set("C" .. r, string.format("=A%d*2+B%d", r, r))
  if r == 1 then
    sheet:set("D1", "=C1")
  else
    sheet:set("D" .. r, string.format("=D%d+C%d", r - 1, r)) -- running total
  end
  local lo = math.max(1, r - 7)
  sheet:set("E" .. r, string.format("=AVG(A%d:A%d)", lo, r))
  sheet:set("F" .. r, string.format("=IF(C%d>E%d, MAX(A%d:B%d), MIN(A%d, B%d, 50)) - ABS(B%d-50)", r, r, lo, r, r, r, r))
  if r > 10 then
    sheet:set("G" .. r, string.format("=SUM(F%d:F%d)/10 + G%d*0", r - 9, r, r - 10))
  else
    sheet:set("G" .. r, "=0")
  end
end
sheet:set("H1", string.format("=SUM(C1:C%d)", ROWS))
sheet:set("H2", string.format("=MAX(D1:D%d)-MIN(F1:F%d)", ROWS, ROWS))
sheet:set("H3", string.format("=SUM(G1:G%d)", ROWS))

local edits = scaled(1500)
local cycles = 0
for e = 1, edits do
  local r = rand(ROWS)
  local k = rand(20)
  if k <= 12 then
    sheet:set("A" .. r, rand(1000))
  elseif k <= 18 then
    sheet:set("B" .. r, rand(100))
  elseif k == 19 then
    -- re-enter a formula (recompiles it)
    sheet:set("C" .. r, string.format("=A%d*%d+B%d", r, 2 + e % 3, r))
  else
    -- a temporary cycle, then undone
    if sheet:set("B" .. r, "=H1+1") then cycles = cycles + 1 end
    sheet:set("B" .. r, rand(100))
  end
end

-- verify incremental values against a full recalculation
local snapshot = {}
for n, v in pairs(sheet.values) do snapshot[n] = v end
if not sheet:full_recalc() then error("spreadsheet: full recalculation found a cycle") end
local names = {}
for n in pairs(sheet.values) do names[#names + 1] = n end
table.sort(names)
local checksum = 0
for _, n in ipairs(names) do
  local a, b = snapshot[n], sheet.values[n]
  if a ~= b and math.abs(a - b) > 1e-9 * math.max(1, math.abs(b)) then
    error(string.format("spreadsheet: %s incremental %s vs full %s", n, tostring(a), tostring(b)))
  end
  checksum = (checksum * 31 + math.floor(b * 100 + 0.5)) % 1000000007
end
-- direct check of the running total
local total = 0
for r = 1, ROWS do total = total + sheet.values["C" .. r] end
if sheet.values["D" .. ROWS] ~= total or sheet.values["H1"] ~= total then
  error("spreadsheet: running total is wrong")
end
if cycles == 0 and edits >= 100 then error("spreadsheet: no cycle was detected") end

print(string.format("spreadsheet: cells=%d edits=%d recomputed=%d cycles=%d H1=%d checksum=%d",
  #names, edits, sheet.recomputed, cycles, sheet.values.H1, checksum))
