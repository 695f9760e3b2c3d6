-- json.lua: a JSON encoder and decoder, run as a round trip over generated
-- documents (nested objects and arrays, escaped and non-ASCII strings, integers,
-- floats, booleans, null). Stands for: web-service request/response handling,
-- configuration loading, log shipping.
-- Usage: json.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

-- 64-bit LCG (wrapping integer arithmetic), top bits used
local seed = 0x2545F4914F6CDD1D
local function rand(n)
  seed = seed * 6364136223846793005 + 1442695040888963407
  return ((seed >> 33) % n) + 1
end

local NULL = setmetatable({}, { __tostring = function() return "null" end })

---------------------------------------------------------------- encoder
local ESC = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}
for i = 0, 31 do
  local c = string.char(i)
  if not ESC[c] then ESC[c] = string.format("\\u%04x", i) end
end

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', ESC) .. '"'
end

local encode_value

function encode_value(v, buf)
  local ty = type(v)
  if ty == "string" then
    buf[#buf + 1] = encode_string(v)
  elseif ty == "number" then
    if math.type(v) == "integer" then
      buf[#buf + 1] = string.format("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then
      error("cannot encode non-finite number")
    else
      local t = string.format("%.17g", v)
      if not t:find("[.eEn]") then t = t .. ".0" end -- keep floats floats
      buf[#buf + 1] = t
    end
  elseif ty == "boolean" then
    buf[#buf + 1] = v and "true" or "false"
  elseif v == NULL then
    buf[#buf + 1] = "null"
  elseif ty == "table" then
    if v.__object then
      -- object with sorted keys for a canonical encoding
      local keys = {}
      for k in pairs(v) do
        if k ~= "__object" then keys[#keys + 1] = k end
      end
      table.sort(keys)
      buf[#buf + 1] = "{"
      for i = 1, #keys do
        if i > 1 then buf[#buf + 1] = "," end
        buf[#buf + 1] = encode_string(keys[i])
        buf[#buf + 1] = ":"
        encode_value(v[keys[i]], buf)
      end
      buf[#buf + 1] = "}"
    else
      buf[#buf + 1] = "["
      for i = 1, #v do
        if i > 1 then buf[#buf + 1] = "," end
        encode_value(v[i], buf)
      end
      buf[#buf + 1] = "]"
    end
  else
    error("cannot encode " .. ty)
  end
end

local function encode(v)
  local buf = {}
  encode_value(v, buf)
  return table.concat(buf)
end

---------------------------------------------------------------- decoder
local decode_value

local function skip_ws(s, pos)
  local _, e = s:find("^[ \t\r\n]*", pos)
  return e + 1
end

local function decode_error(s, pos, what)
  error(string.format("json: %s at position %d near '%s'", what, pos, s:sub(pos, pos + 10)))
end

local UNESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function decode_string(s, pos)
  -- pos is at the opening quote
  local buf = {}
  local i = pos + 1
  while true do
    local a, b = s:find('^[^"\\]+', i)
    if a then
      buf[#buf + 1] = s:sub(a, b)
      i = b + 1
    end
    local c = s:sub(i, i)
    if c == '"' then
      return table.concat(buf), i + 1
    elseif c == "\\" then
      local e = s:sub(i + 1, i + 1)
      if e == "u" then
        local hex = s:sub(i + 2, i + 5)
        if not hex:find("^%x%x%x%x$") then decode_error(s, i, "bad unicode escape") end
        local cp = tonumber(hex, 16)
        buf[#buf + 1] = utf8.char(cp)
        i = i + 6
      else
        local r = UNESC[e]
        if not r then decode_error(s, i, "bad escape") end
        buf[#buf + 1] = r
        i = i + 2
      end
    else
      decode_error(s, i, "unterminated string")
    end
  end
end

local function decode_number(s, pos)
  local a, b = s:find("^-?%d+", pos)
  if not a then decode_error(s, pos, "bad number") end
  local isfloat = false
  local c, d = s:find("^%.%d+", b + 1)
  if c then b = d; isfloat = true end
  c, d = s:find("^[eE][-+]?%d+", b + 1)
  if c then b = d; isfloat = true end
  local text = s:sub(a, b)
  local v
  if isfloat then v = tonumber(text) + 0.0 else v = math.tointeger(tonumber(text)) end
  return v, b + 1
end

function decode_value(s, pos)
  pos = skip_ws(s, pos)
  local c = s:byte(pos)
  if c == 123 then -- {
    local obj = { __object = true }
    pos = skip_ws(s, pos + 1)
    if s:byte(pos) == 125 then return obj, pos + 1 end
    while true do
      if s:byte(pos) ~= 34 then decode_error(s, pos, "expected key") end
      local key
      key, pos = decode_string(s, pos)
      pos = skip_ws(s, pos)
      if s:byte(pos) ~= 58 then decode_error(s, pos, "expected ':'") end
      local val
      val, pos = decode_value(s, pos + 1)
      obj[key] = val
      pos = skip_ws(s, pos)
      local d = s:byte(pos)
      if d == 125 then return obj, pos + 1 end
      if d ~= 44 then decode_error(s, pos, "expected ',' or '}'") end
      pos = skip_ws(s, pos + 1)
    end
  elseif c == 91 then -- [
    local arr = {}
    local n = 0
    pos = skip_ws(s, pos + 1)
    if s:byte(pos) == 93 then return arr, pos + 1 end
    while true do
      local val
      val, pos = decode_value(s, pos)
      n = n + 1
      arr[n] = val
      pos = skip_ws(s, pos)
      local d = s:byte(pos)
      if d == 93 then return arr, pos + 1 end
      if d ~= 44 then decode_error(s, pos, "expected ',' or ']'") end
      pos = pos + 1
    end
  elseif c == 34 then
    return decode_string(s, pos)
  elseif c == 116 then
    if s:sub(pos, pos + 3) ~= "true" then decode_error(s, pos, "bad literal") end
    return true, pos + 4
  elseif c == 102 then
    if s:sub(pos, pos + 4) ~= "false" then decode_error(s, pos, "bad literal") end
    return false, pos + 5
  elseif c == 110 then
    if s:sub(pos, pos + 3) ~= "null" then decode_error(s, pos, "bad literal") end
    return NULL, pos + 4
  else
    return decode_number(s, pos)
  end
end

local function decode(s)
  local v, pos = decode_value(s, 1)
  pos = skip_ws(s, pos)
  if pos <= #s then decode_error(s, pos, "trailing garbage") end
  return v
end

---------------------------------------------------------------- generator
local WORDS = { "alpha", "beta", "gamma", "delta", "id", "name", "value", "items", "user",
  "email", "created", "tags", "score", "active", "parent", "children", "x", "y", "z", "meta" }
local SPECIAL = { "tab\there", "quote\"d", "back\\slash", "new\nline", "caf\u{e9}", "\u{20ac}100",
  "ctrl\1\2", "plain text with spaces", "" }

local function gen_string()
  local r = rand(10)
  if r <= 2 then return SPECIAL[rand(#SPECIAL)] end
  local parts = {}
  for i = 1, rand(4) do parts[i] = WORDS[rand(#WORDS)] end
  return table.concat(parts, "_")
end

local function gen_value(depth)
  local r = rand(depth > 0 and 10 or 6)
  if r == 1 then return rand(2000000) - 1000000
  elseif r == 2 then return (rand(2000000) - 1000000) / 1024
  elseif r == 3 then return gen_string()
  elseif r == 4 then return rand(2) == 1
  elseif r == 5 then return NULL
  elseif r == 6 then return rand(100) * 1.5e10
  elseif r <= 8 then
    local arr = {}
    for i = 1, rand(6) - 1 do arr[i] = gen_value(depth - 1) end
    return arr
  else
    local obj = { __object = true }
    for _ = 1, rand(6) do obj[WORDS[rand(#WORDS)]] = gen_value(depth - 1) end
    return obj
  end
end

local function deep_equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then
    if type(a) == "number" and math.type(a) ~= math.type(b) then return false end
    return a == b
  end
  for k, v in pairs(a) do
    if not deep_equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

---------------------------------------------------------------- workload
local docs = scaled(3500)
local total_bytes, checksum, nodes = 0, 0, 0

local function count_nodes(v)
  local n = 1
  if type(v) == "table" and v ~= NULL then
    for k, x in pairs(v) do
      if k ~= "__object" then n = n + count_nodes(x) end
    end
  end
  return n
end

for d = 1, docs do
  local doc = { __object = true, id = d, payload = gen_value(5), list = {} }
  for i = 1, 20 do doc.list[i] = gen_value(3) end
  local text = encode(doc)
  local back = decode(text)
  if not deep_equal(doc, back) then error("json: round trip changed document " .. d) end
  local text2 = encode(back)
  if text2 ~= text then error("json: re-encoding differs for document " .. d) end
  total_bytes = total_bytes + #text
  nodes = nodes + count_nodes(back)
  for i = 1, #text, 7 do
    checksum = (checksum * 33 + text:byte(i)) % 4294967296
  end
end

-- a fixed document with a known canonical encoding
local fixed = decode(' { "b" : [1, 2.5, -3e2, true, false, null, "x\\u00e9\\n"], "a": {"k": {}} } ')
local want = '{"a":{"k":{}},"b":[1,2.5,-300.0,true,false,null,"x\u{e9}\\n"]}'
if encode(fixed) ~= want then error("json: fixed document encodes as " .. encode(fixed)) end

-- malformed input is rejected
for _, bad in ipairs({ "[1,2", '{"a" 1}', '"abc', "[1,]x", "tru" }) do
  if pcall(decode, bad) then error("json: accepted malformed input " .. bad) end
end

print(string.format("json: docs=%d bytes=%d nodes=%d checksum=%d", docs, total_bytes, nodes, checksum))
