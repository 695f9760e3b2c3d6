-- interp.lua: an interpreter for "Mini", a small dynamically typed language.
-- A hand-written tokenizer, a recursive-descent/precedence-climbing parser that
-- builds an AST of tables, and a tree-walking evaluator with lexical scopes,
-- closures, arrays and strings. Stands for: scripting engines, template and
-- query-language interpreters, config evaluators.
-- Usage: interp.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

---------------------------------------------------------------- tokenizer
local KEYWORDS = {
  fn = true, let = true, ["if"] = true, ["else"] = true, ["while"] = true,
  ["return"] = true, ["true"] = true, ["false"] = true, ["nil"] = true,
  ["and"] = true, ["or"] = true, ["not"] = true,
}

local TWO = { ["=="] = true, ["!="] = true, ["<="] = true, [">="] = true, ["++"] = true }

local function tokenize(src)
  local toks = {}
  local n = 0
  local pos, len = 1, #src
  local line = 1
  while pos <= len do
    local c = src:byte(pos)
    if c == 10 then
      line = line + 1
      pos = pos + 1
    elseif c == 32 or c == 9 or c == 13 then
      pos = pos + 1
    elseif c == 35 then -- '#' comment to end of line
      local e = src:find("\n", pos, true) or len + 1
      pos = e
    elseif c >= 48 and c <= 57 then
      local s, e = src:find("^%d+", pos)
      n = n + 1
      toks[n] = { k = "num", v = tonumber(src:sub(s, e)), line = line }
      pos = e + 1
    elseif (c >= 97 and c <= 122) or (c >= 65 and c <= 90) or c == 95 then
      local s, e = src:find("^[%w_]+", pos)
      local word = src:sub(s, e)
      n = n + 1
      if KEYWORDS[word] then
        toks[n] = { k = word, line = line }
      else
        toks[n] = { k = "id", v = word, line = line }
      end
      pos = e + 1
    elseif c == 34 then -- string literal with \n and \" escapes
      local buf = {}
      local i = pos + 1
      while true do
        local ch = src:sub(i, i)
        if ch == "" then error("unterminated string at line " .. line) end
        if ch == '"' then break end
        if ch == "\\" then
          i = i + 1
          ch = src:sub(i, i)
          if ch == "n" then ch = "\n" elseif ch == "t" then ch = "\t" end
        end
        buf[#buf + 1] = ch
        i = i + 1
      end
      n = n + 1
      toks[n] = { k = "str", v = table.concat(buf), line = line }
      pos = i + 1
    else
      local two = src:sub(pos, pos + 1)
      n = n + 1
      if TWO[two] then
        toks[n] = { k = two, line = line }
        pos = pos + 2
      else
        toks[n] = { k = src:sub(pos, pos), line = line }
        pos = pos + 1
      end
    end
  end
  n = n + 1
  toks[n] = { k = "eof", line = line }
  return toks
end

---------------------------------------------------------------- parser
local Parser = {}
Parser.__index = Parser

local function new_parser(toks)
  return setmetatable({ toks = toks, i = 1 }, Parser)
end

function Parser:peek() return self.toks[self.i].k end

function Parser:next()
  local t = self.toks[self.i]
  self.i = self.i + 1
  return t
end

function Parser:expect(k)
  local t = self.toks[self.i]
  if t.k ~= k then
    error(string.format("line %d: expected '%s' but got '%s'", t.line, k, t.k))
  end
  self.i = self.i + 1
  return t
end

function Parser:accept(k)
  if self.toks[self.i].k == k then
    self.i = self.i + 1
    return true
  end
  return false
end

local BINPREC = {
  ["or"] = 1, ["and"] = 2,
  ["=="] = 3, ["!="] = 3, ["<"] = 3, ["<="] = 3, [">"] = 3, [">="] = 3,
  ["++"] = 4,
  ["+"] = 5, ["-"] = 5,
  ["*"] = 6, ["/"] = 6, ["%"] = 6,
}

function Parser:block()
  self:expect("{")
  local stmts = {}
  while self:peek() ~= "}" do
    stmts[#stmts + 1] = self:statement()
  end
  self:expect("}")
  return { tag = "block", body = stmts }
end

function Parser:params()
  self:expect("(")
  local ps = {}
  if self:peek() ~= ")" then
    repeat
      ps[#ps + 1] = self:expect("id").v
    until not self:accept(",")
  end
  self:expect(")")
  return ps
end

function Parser:statement()
  local k = self:peek()
  if k == "let" then
    self:next()
    local name = self:expect("id").v
    self:expect("=")
    local e = self:expr(0)
    self:accept(";")
    return { tag = "let", name = name, value = e }
  elseif k == "fn" and self.toks[self.i + 1].k == "id" then
    self:next()
    local name = self:expect("id").v
    local ps = self:params()
    local body = self:block()
    return { tag = "let", name = name, value = { tag = "fn", params = ps, body = body } }
  elseif k == "if" then
    self:next()
    local cond = self:expr(0)
    local th = self:block()
    local el = nil
    if self:accept("else") then
      if self:peek() == "if" then
        el = { tag = "block", body = { self:statement() } }
      else
        el = self:block()
      end
    end
    return { tag = "if", cond = cond, th = th, el = el }
  elseif k == "while" then
    self:next()
    local cond = self:expr(0)
    local body = self:block()
    return { tag = "while", cond = cond, body = body }
  elseif k == "return" then
    self:next()
    local e = nil
    if self:peek() ~= "}" and self:peek() ~= ";" then e = self:expr(0) end
    self:accept(";")
    return { tag = "return", value = e }
  else
    local e = self:expr(0)
    if self:accept("=") then
      local rhs = self:expr(0)
      self:accept(";")
      if e.tag == "var" then
        return { tag = "assign", name = e.name, value = rhs }
      elseif e.tag == "index" then
        return { tag = "setindex", obj = e.obj, key = e.key, value = rhs }
      else
        error("invalid assignment target")
      end
    end
    self:accept(";")
    return { tag = "expr", value = e }
  end
end

function Parser:primary()
  local t = self:next()
  local k = t.k
  local e
  if k == "num" then
    e = { tag = "const", value = t.v }
  elseif k == "str" then
    e = { tag = "const", value = t.v }
  elseif k == "true" then
    e = { tag = "const", value = true }
  elseif k == "false" then
    e = { tag = "const", value = false }
  elseif k == "nil" then
    e = { tag = "const", value = nil }
  elseif k == "id" then
    e = { tag = "var", name = t.v }
  elseif k == "(" then
    e = self:expr(0)
    self:expect(")")
  elseif k == "[" then
    local items = {}
    if self:peek() ~= "]" then
      repeat
        items[#items + 1] = self:expr(0)
      until not self:accept(",")
    end
    self:expect("]")
    e = { tag = "array", items = items }
  elseif k == "fn" then
    local ps = self:params()
    local body = self:block()
    e = { tag = "fn", params = ps, body = body }
  elseif k == "-" then
    return { tag = "neg", value = self:unary() }
  elseif k == "not" then
    return { tag = "not", value = self:unary() }
  else
    error(string.format("line %d: unexpected '%s'", t.line, k))
  end
  -- postfix: calls and indexing
  while true do
    local p = self:peek()
    if p == "(" then
      self:next()
      local args = {}
      if self:peek() ~= ")" then
        repeat
          args[#args + 1] = self:expr(0)
        until not self:accept(",")
      end
      self:expect(")")
      e = { tag = "call", fn = e, args = args }
    elseif p == "[" then
      self:next()
      local key = self:expr(0)
      self:expect("]")
      e = { tag = "index", obj = e, key = key }
    else
      break
    end
  end
  return e
end

function Parser:unary()
  return self:primary()
end

function Parser:expr(minprec)
  local lhs = self:unary()
  while true do
    local op = self:peek()
    local prec = BINPREC[op]
    if not prec or prec <= minprec then break end
    self:next()
    local rhs = self:expr(prec)
    lhs = { tag = "bin", op = op, l = lhs, r = rhs }
  end
  return lhs
end

local function parse(src)
  local p = new_parser(tokenize(src))
  local stmts = {}
  while p:peek() ~= "eof" do
    stmts[#stmts + 1] = p:statement()
  end
  return { tag = "block", body = stmts }
end

---------------------------------------------------------------- evaluator
-- Scopes are tables {vars = {}, parent = scope}. Functions are closures over
-- their defining scope. Return is implemented with a sentinel, not error().

local RETURN = {}
local Closure = {}
Closure.__index = Closure

local function lookup(scope, name)
  local s = scope
  while s do
    local vars = s.vars
    local v = vars[name]
    if v ~= nil or s.has[name] then return v, s end
    s = s.parent
  end
  error("undefined variable " .. name)
end

local function declare(scope, name, value)
  scope.vars[name] = value
  scope.has[name] = true
end

local function new_scope(parent)
  return { vars = {}, has = {}, parent = parent }
end

local eval, exec

local function truthy(v) return v ~= nil and v ~= false end

local function call(f, args)
  if type(f) == "function" then
    return f(table.unpack(args))
  end
  if getmetatable(f) ~= Closure then error("call of non-function") end
  local scope = new_scope(f.scope)
  local ps = f.params
  for i = 1, #ps do
    declare(scope, ps[i], args[i])
  end
  local signal, value = exec(f.body, scope)
  if signal == RETURN then return value end
  return nil
end

local function tostr(v)
  if type(v) == "table" then
    if getmetatable(v) == Closure then return "<fn>" end
    local parts = {}
    for i = 1, v.n do parts[i] = tostr(v[i]) end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  return tostring(v)
end

local binops = {
  ["+"] = function(a, b) return a + b end,
  ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end,
  ["/"] = function(a, b) return a // b end,
  ["%"] = function(a, b) return a % b end,
  ["=="] = function(a, b) return a == b end,
  ["!="] = function(a, b) return a ~= b end,
  ["<"] = function(a, b) return a < b end,
  ["<="] = function(a, b) return a <= b end,
  [">"] = function(a, b) return a > b end,
  [">="] = function(a, b) return a >= b end,
  ["++"] = function(a, b) return tostr(a) .. tostr(b) end,
}

function eval(e, scope)
  local tag = e.tag
  if tag == "const" then
    return e.value
  elseif tag == "var" then
    return (lookup(scope, e.name))
  elseif tag == "bin" then
    local op = e.op
    if op == "and" then
      local l = eval(e.l, scope)
      if not truthy(l) then return l end
      return eval(e.r, scope)
    elseif op == "or" then
      local l = eval(e.l, scope)
      if truthy(l) then return l end
      return eval(e.r, scope)
    end
    return binops[op](eval(e.l, scope), eval(e.r, scope))
  elseif tag == "call" then
    local f = eval(e.fn, scope)
    local args = {}
    local a = e.args
    for i = 1, #a do args[i] = eval(a[i], scope) end
    return call(f, args)
  elseif tag == "index" then
    local obj = eval(e.obj, scope)
    local key = eval(e.key, scope)
    if type(obj) == "string" then return obj:sub(key + 1, key + 1) end
    if key < 0 or key >= obj.n then error("index out of range: " .. key) end
    return obj[key + 1]
  elseif tag == "array" then
    local arr = { n = #e.items }
    for i = 1, #e.items do arr[i] = eval(e.items[i], scope) end
    return arr
  elseif tag == "fn" then
    return setmetatable({ params = e.params, body = e.body, scope = scope }, Closure)
  elseif tag == "neg" then
    return -eval(e.value, scope)
  elseif tag == "not" then
    return not truthy(eval(e.value, scope))
  end
  error("bad expression " .. tostring(tag))
end

function exec(block, scope)
  local body = block.body
  for i = 1, #body do
    local s = body[i]
    local tag = s.tag
    if tag == "expr" then
      eval(s.value, scope)
    elseif tag == "let" then
      declare(scope, s.name, nil)
      declare(scope, s.name, eval(s.value, scope))
    elseif tag == "assign" then
      local v = eval(s.value, scope)
      local _, where = lookup(scope, s.name)
      where.vars[s.name] = v
    elseif tag == "setindex" then
      local obj = eval(s.obj, scope)
      local key = eval(s.key, scope)
      local v = eval(s.value, scope)
      if key < 0 then error("negative index") end
      obj[key + 1] = v
      if key >= obj.n then obj.n = key + 1 end
    elseif tag == "if" then
      local sig, val
      if truthy(eval(s.cond, scope)) then
        sig, val = exec(s.th, new_scope(scope))
      elseif s.el then
        sig, val = exec(s.el, new_scope(scope))
      end
      if sig then return sig, val end
    elseif tag == "while" then
      while truthy(eval(s.cond, scope)) do
        local sig, val = exec(s.body, new_scope(scope))
        if sig then return sig, val end
      end
    elseif tag == "return" then
      if s.value then return RETURN, eval(s.value, scope) end
      return RETURN, nil
    else
      error("bad statement " .. tostring(tag))
    end
  end
  return nil
end

---------------------------------------------------------------- programs
local PROGRAM = [[
# recursive functions
fn fib(n) {
  if n < 2 { return n }
  return fib(n - 1) + fib(n - 2)
}

# arrays and loops: sieve of Eratosthenes
fn primes_below(n) {
  let flags = []
  let i = 0
  while i < n { flags[i] = true; i = i + 1 }
  let count = 0
  let p = 2
  while p < n {
    if flags[p] {
      count = count + 1
      let m = p * p
      while m < n { flags[m] = false; m = m + p }
    }
    p = p + 1
  }
  return count
}

# closures and higher-order functions
fn make_counter(step) {
  let total = 0
  return fn() { total = total + step; return total }
}
fn map(arr, f) {
  let out = []
  let i = 0
  while i < len(arr) { out[i] = f(arr[i]); i = i + 1 }
  return out
}
fn fold(arr, f, acc) {
  let i = 0
  while i < len(arr) { acc = f(acc, arr[i]); i = i + 1 }
  return acc
}

# insertion sort on an array filled by an LCG
fn sort_check(n, seed) {
  let a = []
  let i = 0
  while i < n {
    seed = (seed * 1103515245 + 12345) % 2147483648
    a[i] = seed % 1000
    i = i + 1
  }
  i = 1
  while i < n {
    let x = a[i]
    let j = i - 1
    while j >= 0 and a[j] > x { a[j + 1] = a[j]; j = j - 1 }
    a[j + 1] = x
    i = i + 1
  }
  i = 1
  while i < n {
    if a[i - 1] > a[i] { return -1 }
    i = i + 1
  }
  return a[0] * 1000 + a[n - 1]
}

# strings
fn repeat_str(s, n) {
  let out = ""
  while n > 0 { out = out ++ s; n = n - 1 }
  return out
}

fn main(k) {
  let c = make_counter(3)
  let j = 0
  while j < 10 { c(); j = j + 1 }
  let squares = map([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], fn(x) { return x * x })
  let sum = fold(squares, fn(a, b) { return a + b }, 0)
  let s = repeat_str("ab", k % 7 + 1)
  return [fib(k), primes_below(200 * k), c(), sum, sort_check(40 + k, k), len(s)]
}

result = main(K)
]]

local function run_program(src, k)
  local ast = parse(src)
  local global = new_scope(nil)
  declare(global, "len", function(a)
    if type(a) == "string" then return #a end
    return a.n
  end)
  declare(global, "K", k)
  declare(global, "result", nil)
  exec(ast, global)
  return global.vars.result
end

-- reference answers computed directly in Lua
local function ref_fib(n) if n < 2 then return n end return ref_fib(n - 1) + ref_fib(n - 2) end
local function ref_primes(n)
  local flags, c = {}, 0
  for p = 2, n - 1 do
    if not flags[p] then
      c = c + 1
      for m = p * p, n - 1, p do flags[m] = true end
    end
  end
  return c
end
local function ref_sort(n, seed)
  local a = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    a[i] = seed % 1000
  end
  table.sort(a)
  return a[1] * 1000 + a[n]
end

local rounds = scaled(100)
local checksum = 0
for r = 1, rounds do
  local k = 10 + r % 8
  local res = run_program(PROGRAM, k)
  local expect = { ref_fib(k), ref_primes(200 * k), 33, 385, ref_sort(40 + k, k), 2 * (k % 7 + 1) }
  if res.n ~= #expect then error("interp: wrong result length") end
  for i = 1, #expect do
    if res[i] ~= expect[i] then
      error(string.format("interp: round %d item %d: got %s, want %s", r, i, tostr(res[i]), tostring(expect[i])))
    end
    checksum = (checksum * 31 + res[i]) % 1000000007
  end
end

-- error handling path of the front end
local ok, msg = pcall(parse, "let x = (1 + ")
if ok or not tostring(msg):find("unexpected 'eof'", 1, true) then
  error("interp: syntax error not detected: " .. tostring(msg))
end

print(string.format("interp: rounds=%d checksum=%d", rounds, checksum))
