-- regex.lua: a regular-expression engine. Patterns (alternation, groups,
-- * + ? and {m,n} quantifiers, character classes with ranges and negation,
-- \d \w \s escapes, ., ^ and $) are parsed into an AST and compiled to a
-- Thompson-NFA program that a Pike VM runs in linear time, reporting the
-- leftmost-longest match. A backtracking matcher over the same program and
-- Lua's own string.find (for patterns expressible as Lua patterns) cross-check
-- the answers on generated log lines. Stands for: grep, log filters, lexers,
-- input validation.
-- Usage: regex.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 8675309
local function rand(n)
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return (seed >> 4) % n + 1
end

---------------------------------------------------------------- parser
-- AST nodes: {t="char", set=...} (set: table byte->true), {t="cat", a, b},
-- {t="alt", a, b}, {t="star"/"plus"/"opt", x}, {t="rep", x, min, max},
-- {t="bol"}, {t="eol"}, {t="empty"}

local function class_set(pred)
  local s = {}
  for c = 0, 255 do if pred(c) then s[c] = true end end
  return s
end
local DIGIT = class_set(function(c) return c >= 48 and c <= 57 end)
local WORD = class_set(function(c)
  return (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95
end)
local SPACE = class_set(function(c) return c == 32 or (c >= 9 and c <= 13) end)
local ANY = class_set(function(c) return c ~= 10 end)

local function parse(pat)
  local pos = 1
  local function peek() return pat:sub(pos, pos) end
  local function eat() local c = pat:sub(pos, pos); pos = pos + 1; return c end
  local alt

  local function escape_set(c)
    if c == "d" then return DIGIT
    elseif c == "w" then return WORD
    elseif c == "s" then return SPACE
    end
    return { [c:byte()] = true }
  end

  local function parse_class()
    -- after '['
    local set, negate = {}, false
    if peek() == "^" then eat(); negate = true end
    local first = true
    while first or peek() ~= "]" do
      first = false
      if pos > #pat then error("regex: unterminated class in " .. pat) end
      local c = eat()
      if c == "\\" then
        for k in pairs(escape_set(eat())) do set[k] = true end
      elseif peek() == "-" and pat:sub(pos + 1, pos + 1) ~= "]" and pat:sub(pos + 1, pos + 1) ~= "" then
        eat()
        local hi = eat()
        for k = c:byte(), hi:byte() do set[k] = true end
      else
        set[c:byte()] = true
      end
    end
    eat() -- ']'
    if negate then
      local n = {}
      for k = 0, 255 do if not set[k] and k ~= 10 then n[k] = true end end
      set = n
    end
    return set
  end

  local function atom()
    local c = eat()
    if c == "(" then
      local e = alt()
      if eat() ~= ")" then error("regex: missing ) in " .. pat) end
      return e
    elseif c == "[" then
      return { t = "char", set = parse_class() }
    elseif c == "." then
      return { t = "char", set = ANY }
    elseif c == "^" then
      return { t = "bol" }
    elseif c == "$" then
      return { t = "eol" }
    elseif c == "\\" then
      return { t = "char", set = escape_set(eat()) }
    else
      return { t = "char", set = { [c:byte()] = true } }
    end
  end

  local function repeated()
    local a = atom()
    while true do
      local c = peek()
      if c == "*" then eat(); a = { t = "star", a }
      elseif c == "+" then eat(); a = { t = "plus", a }
      elseif c == "?" then eat(); a = { t = "opt", a }
      elseif c == "{" then
        local s, e, lo, hi = pat:find("^{(%d+),?(%d*)}", pos)
        if not s then break end
        local has_comma = pat:sub(s, e):find(",") ~= nil
        lo = tonumber(lo)
        if hi == "" then hi = has_comma and -1 or lo else hi = tonumber(hi) end
        pos = e + 1
        a = { t = "rep", a, lo, hi }
      else
        break
      end
    end
    return a
  end

  local function concat()
    local e = nil
    while pos <= #pat and peek() ~= "|" and peek() ~= ")" do
      local r = repeated()
      if e then e = { t = "cat", e, r } else e = r end
    end
    return e or { t = "empty" }
  end

  function alt()
    local e = concat()
    while peek() == "|" do
      eat()
      e = { t = "alt", e, concat() }
    end
    return e
  end

  local e = alt()
  if pos <= #pat then error("regex: unexpected ) in " .. pat) end
  return e
end

---------------------------------------------------------------- compiler
-- instructions: {op="char", set}, {op="split", x, y}, {op="jmp", x},
-- {op="bol"}, {op="eol"}, {op="match"}
local function compile(ast)
  local prog = {}
  local function emit(ins) prog[#prog + 1] = ins; return #prog end
  local gen
  local function gen_copy(node) gen(node) end
  function gen(n)
    local t = n.t
    if t == "char" then
      emit({ op = "char", set = n.set })
    elseif t == "cat" then
      gen(n[1]); gen(n[2])
    elseif t == "alt" then
      local s = emit({ op = "split" })
      s = prog[s]
      s[1] = #prog + 1
      gen(n[1])
      local j = prog[emit({ op = "jmp" })]
      s[2] = #prog + 1
      gen(n[2])
      j[1] = #prog + 1
    elseif t == "star" then
      local at = #prog + 1
      local s = prog[emit({ op = "split" })]
      s[1] = #prog + 1
      gen(n[1])
      emit({ op = "jmp", at })
      s[2] = #prog + 1
    elseif t == "plus" then
      local at = #prog + 1
      gen(n[1])
      emit({ op = "split", at, #prog + 2 })
    elseif t == "opt" then
      local s = prog[emit({ op = "split" })]
      s[1] = #prog + 1
      gen(n[1])
      s[2] = #prog + 1
    elseif t == "rep" then
      local lo, hi = n[2], n[3]
      for _ = 1, lo do gen_copy(n[1]) end
      if hi < 0 then
        gen({ t = "star", n[1] })
      else
        for _ = lo + 1, hi do gen({ t = "opt", n[1] }) end
      end
    elseif t == "bol" then
      emit({ op = "bol" })
    elseif t == "eol" then
      emit({ op = "eol" })
    elseif t == "empty" then
      -- nothing
    else
      error("regex: bad node " .. tostring(t))
    end
  end
  gen(ast)
  emit({ op = "match" })
  return prog
end

---------------------------------------------------------------- Pike VM
-- leftmost-longest: returns start, end (inclusive) of the match or nil
local function pike_find(prog, s)
  local n = #s
  local clist, nlist = {}, {}
  local cstart, nstart = {}, {}
  local mark, gen = {}, 0
  local best_s, best_e = nil, nil

  local function add(list, starts, pc, start, i)
    if mark[pc] == gen then return end
    mark[pc] = gen
    local ins = prog[pc]
    local op = ins.op
    if op == "jmp" then
      add(list, starts, ins[1], start, i)
    elseif op == "split" then
      add(list, starts, ins[1], start, i)
      add(list, starts, ins[2], start, i)
    elseif op == "bol" then
      if i == 1 then add(list, starts, pc + 1, start, i) end
    elseif op == "eol" then
      if i == n + 1 then add(list, starts, pc + 1, start, i) end
    else
      list[#list + 1] = pc
      starts[#starts + 1] = start
    end
  end

  gen = gen + 1
  for i = 1, n + 1 do
    -- a new thread may start here while no match has been found yet
    if not best_s then
      add(clist, cstart, 1, i, i)
    end
    if #clist == 0 then break end
    gen = gen + 1
    local c = s:byte(i)
    for k = 1, #clist do
      local pc = clist[k]
      local ins = prog[pc]
      local st = cstart[k]
      if ins.op == "match" then
        -- threads are ordered by start position: the first match has the leftmost start
        if not best_s or st < best_s or (st == best_s and i - 1 > best_e) then
          best_s, best_e = st, i - 1
        end
      elseif c and ins.set[c] then
        add(nlist, nstart, pc + 1, st, i + 1)
      end
    end
    clist, nlist = nlist, clist
    cstart, nstart = nstart, cstart
    for k = #nlist, 1, -1 do nlist[k] = nil; nstart[k] = nil end
    -- drop threads that started after the best match's start
    if best_s then
      local w = 0
      for k = 1, #clist do
        if cstart[k] <= best_s then
          w = w + 1
          clist[w] = clist[k]
          cstart[w] = cstart[k]
        end
      end
      for k = #clist, w + 1, -1 do clist[k] = nil; cstart[k] = nil end
    end
  end
  return best_s, best_e
end

---------------------------------------------------------------- backtracker
-- does the program match starting exactly at i? (memoised on (pc, i) failures)
local function bt_match_at(prog, s, i)
  local n = #s
  local failed = {}
  local longest = nil
  local function run(pc, j)
    local key = pc * (n + 2) + j
    if failed[key] then return end
    failed[key] = true
    local ins = prog[pc]
    local op = ins.op
    if op == "match" then
      if not longest or j - 1 > longest then longest = j - 1 end
    elseif op == "char" then
      local c = s:byte(j)
      if c and ins.set[c] then run(pc + 1, j + 1) end
    elseif op == "jmp" then
      run(ins[1], j)
    elseif op == "split" then
      run(ins[1], j)
      run(ins[2], j)
    elseif op == "bol" then
      if j == 1 then run(pc + 1, j) end
    elseif op == "eol" then
      if j == n + 1 then run(pc + 1, j) end
    end
  end
  run(1, i)
  return longest
end

local function bt_find(prog, s)
  for i = 1, #s + 1 do
    local e = bt_match_at(prog, s, i)
    if e then return i, e end
  end
  return nil
end

---------------------------------------------------------------- input
local LEVELS = { "INFO", "INFO", "WARN", "DEBUG", "ERROR" }
local USERS = { "alice", "bob", "carol", "dave", "eve_99", "mallory" }
local PATHS = { "/api/v1/users", "/api/v2/orders/", "/static/img/logo.png", "/login", "/search?q=lua" }
local function gen_line()
  local ip = string.format("%d.%d.%d.%d", rand(255), rand(256) - 1, rand(256) - 1, rand(256) - 1)
  local line = string.format("2024-%02d-%02d %02d:%02d:%02d %s %s user=%s path=%s%s status=%d took=%dms",
    rand(12), rand(28), rand(24) - 1, rand(60) - 1, rand(60) - 1, LEVELS[rand(#LEVELS)], ip,
    USERS[rand(#USERS)], PATHS[rand(#PATHS)], rand(3) == 1 and tostring(rand(9999)) or "",
    ({ 200, 200, 200, 301, 404, 500 })[rand(6)], rand(2000))
  if rand(10) == 1 then line = line .. " mail=" .. USERS[rand(#USERS)] .. "@example.org" end
  return line
end

-- regexes; lua = an equivalent Lua pattern where one exists (same leftmost-longest span
-- is not guaranteed by Lua's greedy matcher, so only the presence of a match is compared)
local PATTERNS = {
  { re = "ERROR|WARN", lua = nil },
  { re = "status=(404|500)", lua = nil },
  { re = "^2024-0[1-6]", lua = "^2024%-0[1-6]" },
  { re = "took=\\d{4}ms", lua = "took=%d%d%d%dms" },
  { re = "user=[a-z]+_\\d+", lua = "user=[a-z]+_%d+" },
  { re = "\\d+\\.\\d+\\.\\d+\\.\\d+", lua = "%d+%.%d+%.%d+%.%d+" },
  { re = "[\\w.]+@[a-z]+\\.(org|com)", lua = nil },
  { re = "path=/api/v\\d/\\w+/?\\d*\\s", lua = "path=/api/v%d/%w+/?%d*%s" },
  { re = "(a|b)*c", lua = nil },
  { re = "[^ ]+\\?q=\\w+", lua = "[^ ]+%?q=%w+" },
  { re = "(\\d\\d:){2}\\d\\d", lua = "%d%d:%d%d:%d%d" },
  { re = "DEBUG.*took=[0-4]\\d?ms$", lua = nil },
}

local compiled = {}
for i, p in ipairs(PATTERNS) do compiled[i] = compile(parse(p.re)) end

-- known answers on fixed strings
local function expect(re, s, ws, we)
  local a, b = pike_find(compile(parse(re)), s)
  if a ~= ws or b ~= we then
    error(string.format("regex: /%s/ on %q gave %s,%s want %s,%s", re, s, tostring(a), tostring(b),
      tostring(ws), tostring(we)))
  end
end
expect("b+", "aabbbc", 3, 5)
expect("a|ab", "xab", 2, 3)           -- longest, unlike backtracking engines
expect("x*", "abc", 1, 0)             -- empty match at the start
expect("^abc$", "abc", 1, 3)
expect("^abc$", "abcd", nil, nil)
expect("[^a-c]+", "abcdefa", 4, 6)
expect("a{2,3}", "aaaa", 1, 3)
expect("(ab){2,}", "xabababy", 2, 7)
expect("colou?r", "the color red", 5, 9)

---------------------------------------------------------------- workload
local nlines = scaled(5000)
local counts = {}
for i = 1, #PATTERNS do counts[i] = 0 end
local checksum, cross = 0, 0
for l = 1, nlines do
  local line = gen_line()
  for i = 1, #PATTERNS do
    local s, e = pike_find(compiled[i], line)
    if s then
      counts[i] = counts[i] + 1
      checksum = (checksum * 31 + s * 7 + e) % 1000000007
    end
    local lp = PATTERNS[i].lua
    if lp and (line:find(lp) ~= nil) ~= (s ~= nil) then
      error(string.format("regex: /%s/ and Lua pattern disagree on %q", PATTERNS[i].re, line))
    end
    if l % 25 == 0 then
      cross = cross + 1
      local bs, be = bt_find(compiled[i], line)
      if bs ~= s or be ~= e then
        error(string.format("regex: /%s/ Pike VM %s,%s vs backtracker %s,%s on %q",
          PATTERNS[i].re, tostring(s), tostring(e), tostring(bs), tostring(be), line))
      end
    end
  end
end

print(string.format("regex: lines=%d counts=%s cross=%d checksum=%d", nlines, table.concat(counts, ","), cross, checksum))
