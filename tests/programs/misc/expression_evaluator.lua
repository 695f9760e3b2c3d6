-- A realistic program: tokenizer + recursive-descent parser + evaluator for
-- arithmetic expressions with variables and functions.
local function tokenize(src)
  local tokens, pos = {}, 1
  while pos <= #src do
    local ws = src:match("^%s+", pos)
    if ws then pos = pos + #ws
    else
      local num = src:match("^%d+%.?%d*", pos)
      if num then tokens[#tokens + 1] = {kind = "num", value = tonumber(num)}; pos = pos + #num
      else
        local name = src:match("^[%a_][%w_]*", pos)
        if name then tokens[#tokens + 1] = {kind = "name", value = name}; pos = pos + #name
        else
          local op = src:sub(pos, pos)
          if not op:match("[%+%-%*/%^%(%),]") then error("bad character '" .. op .. "' at " .. pos, 0) end
          tokens[#tokens + 1] = {kind = op}
          pos = pos + 1
        end
      end
    end
  end
  tokens[#tokens + 1] = {kind = "eof"}
  return tokens
end

local Parser = {}
Parser.__index = Parser
function Parser.new(tokens) return setmetatable({tokens = tokens, i = 1}, Parser) end
function Parser:peek() return self.tokens[self.i].kind end
function Parser:next() local t = self.tokens[self.i]; self.i = self.i + 1; return t end
function Parser:expect(kind)
  local t = self:next()
  if t.kind ~= kind then error("expected " .. kind .. " got " .. t.kind, 0) end
  return t
end
function Parser:expr()
  local node = self:term()
  while self:peek() == "+" or self:peek() == "-" do
    local op = self:next().kind
    node = {op = op, node, self:term()}
  end
  return node
end
function Parser:term()
  local node = self:unary()
  while self:peek() == "*" or self:peek() == "/" do
    local op = self:next().kind
    node = {op = op, node, self:unary()}
  end
  return node
end
function Parser:unary()
  if self:peek() == "-" then self:next(); return {op = "neg", self:unary()} end
  return self:power()
end
function Parser:power()
  local base = self:atom()
  if self:peek() == "^" then self:next(); return {op = "^", base, self:unary()} end
  return base
end
function Parser:atom()
  local t = self:next()
  if t.kind == "num" then return {op = "num", value = t.value} end
  if t.kind == "name" then
    if self:peek() == "(" then
      self:next()
      local args = {}
      if self:peek() ~= ")" then
        repeat args[#args + 1] = self:expr() until self:peek() ~= "," or not self:next()
      end
      self:expect(")")
      return {op = "call", name = t.value, args = args}
    end
    return {op = "var", name = t.value}
  end
  if t.kind == "(" then local e = self:expr(); self:expect(")"); return e end
  error("unexpected " .. t.kind, 0)
end

local function eval(node, env)
  local op = node.op
  if op == "num" then return node.value
  elseif op == "var" then return env[node.name] or error("unknown variable " .. node.name, 0)
  elseif op == "neg" then return -eval(node[1], env)
  elseif op == "call" then
    local args = {}
    for i, a in ipairs(node.args) do args[i] = eval(a, env) end
    return env[node.name](table.unpack(args))
  end
  local a, b = eval(node[1], env), eval(node[2], env)
  if op == "+" then return a + b elseif op == "-" then return a - b
  elseif op == "*" then return a * b elseif op == "/" then return a / b
  else return a ^ b end
end

local env = {x = 3, y = 4, pi = math.pi, max = math.max, sqrt = math.sqrt, min = math.min}
local cases = {
  "1 + 2 * 3", "(1 + 2) * 3", "2 ^ 3 ^ 2", "-2 ^ 2", "sqrt(x*x + y*y)",
  "max(1, x, y, 2) - min(x, y)", "10 / 4", "7 - 3 - 2", "2 * pi", "1 +", "3 $ 4", "z + 1",
}
for _, src in ipairs(cases) do
  local ok, res = pcall(function() return eval(Parser.new(tokenize(src)):expr(), env) end)
  print(string.format("%-30s %s", src, ok and tostring(res) or "error: " .. res))
end
