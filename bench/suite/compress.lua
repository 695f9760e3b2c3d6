-- compress.lua: lossless compression, two codecs with round trips.
--  * LZ77 with a hash-chain match finder (like deflate's), followed by canonical
--    Huffman coding of literals/lengths and distances into a packed bit stream;
--  * LZW with a growing code width.
-- Inputs are generated text (a word-level Markov-ish source), a structured log
-- and low-entropy binary data. Every output must decompress to the input.
-- Stands for: gzip/zip/png codecs, network protocol framing, serialisation.
-- Usage: compress.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 5150
local function rand(n)
  seed = (seed * 214013 + 2531011) % 4294967296
  return (seed >> 16) % n + 1
end

local byte, char, concat = string.byte, string.char, table.concat

---------------------------------------------------------------- bit I/O
local function bit_writer()
  return { bytes = {}, acc = 0, nbits = 0 }
end

local function put_bits(w, value, n)
  -- append n bits of value, least significant first
  w.acc = w.acc | (value << w.nbits)
  w.nbits = w.nbits + n
  while w.nbits >= 8 do
    w.bytes[#w.bytes + 1] = char(w.acc & 0xff)
    w.acc = w.acc >> 8
    w.nbits = w.nbits - 8
  end
end

local function finish_bits(w)
  if w.nbits > 0 then w.bytes[#w.bytes + 1] = char(w.acc & 0xff) end
  return concat(w.bytes)
end

local function bit_reader(s)
  return { s = s, pos = 1, acc = 0, nbits = 0 }
end

local function get_bits(r, n)
  while r.nbits < n do
    local b = byte(r.s, r.pos) or 0
    r.pos = r.pos + 1
    r.acc = r.acc | (b << r.nbits)
    r.nbits = r.nbits + 8
  end
  local v = r.acc & ((1 << n) - 1)
  r.acc = r.acc >> n
  r.nbits = r.nbits - n
  return v
end

---------------------------------------------------------------- Huffman
-- code lengths from frequencies (limited to maxbits by flattening), canonical codes
local function huffman_lengths(freqs, nsyms, maxbits)
  local nodes = {}
  for s = 0, nsyms - 1 do
    if (freqs[s] or 0) > 0 then nodes[#nodes + 1] = { f = freqs[s], sym = s } end
  end
  local lengths = {}
  for s = 0, nsyms - 1 do lengths[s] = 0 end
  if #nodes == 0 then return lengths end
  if #nodes == 1 then lengths[nodes[1].sym] = 1; return lengths end
  -- binary min-heap keyed by (f, order)
  local heap, order = {}, 0
  local function less(a, b)
    if a.f ~= b.f then return a.f < b.f end
    return a.order < b.order
  end
  local function push(x)
    order = order + 1
    x.order = order
    local i = #heap + 1
    heap[i] = x
    while i > 1 do
      local p = i // 2
      if less(heap[i], heap[p]) then heap[i], heap[p] = heap[p], heap[i]; i = p else break end
    end
  end
  local function pop()
    local top = heap[1]
    local last = heap[#heap]
    heap[#heap] = nil
    if #heap > 0 then
      heap[1] = last
      local i = 1
      while true do
        local l, r, m = 2 * i, 2 * i + 1, i
        if l <= #heap and less(heap[l], heap[m]) then m = l end
        if r <= #heap and less(heap[r], heap[m]) then m = r end
        if m == i then break end
        heap[i], heap[m] = heap[m], heap[i]
        i = m
      end
    end
    return top
  end
  for _, n in ipairs(nodes) do push(n) end
  while #heap > 1 do
    local a, b = pop(), pop()
    push({ f = a.f + b.f, left = a, right = b })
  end
  local function walk(n, depth)
    if n.sym then
      lengths[n.sym] = depth
    else
      walk(n.left, depth + 1)
      walk(n.right, depth + 1)
    end
  end
  walk(pop(), 0)
  -- limit lengths: clamp, then fix the Kraft sum by lengthening short codes
  local over = false
  for s = 0, nsyms - 1 do if lengths[s] > maxbits then lengths[s] = maxbits; over = true end end
  if over then
    local function kraft()
      local k = 0
      for s = 0, nsyms - 1 do
        if lengths[s] > 0 then k = k + (1 << (maxbits - lengths[s])) end
      end
      return k
    end
    local k = kraft()
    while k > (1 << maxbits) do
      -- lengthen the longest code that is still below maxbits
      local best
      for s = 0, nsyms - 1 do
        local l = lengths[s]
        if l > 0 and l < maxbits and (not best or l > lengths[best]) then best = s end
      end
      k = k - (1 << (maxbits - lengths[best])) + (1 << (maxbits - lengths[best] - 1))
      lengths[best] = lengths[best] + 1
    end
  end
  return lengths
end

local function reverse_bits(v, n)
  local r = 0
  for _ = 1, n do
    r = (r << 1) | (v & 1)
    v = v >> 1
  end
  return r
end

-- canonical codes, stored bit-reversed so they can be written LSB first
local function canonical(lengths, nsyms, maxbits)
  local count = {}
  for l = 0, maxbits do count[l] = 0 end
  for s = 0, nsyms - 1 do count[lengths[s]] = count[lengths[s]] + 1 end
  count[0] = 0
  local next_code, code = {}, 0
  for l = 1, maxbits do
    code = (code + count[l - 1]) << 1
    next_code[l] = code
  end
  local codes = {}
  for s = 0, nsyms - 1 do
    local l = lengths[s]
    if l > 0 then
      codes[s] = reverse_bits(next_code[l], l)
      next_code[l] = next_code[l] + 1
    end
  end
  return codes
end

-- decoding table: (reversed code | length marker) -> symbol, by reading bit by bit
local function decoder(lengths, nsyms, maxbits)
  local codes = canonical(lengths, nsyms, maxbits)
  local map = {}
  for s = 0, nsyms - 1 do
    local l = lengths[s]
    if l > 0 then map[(1 << l) | codes[s]] = s end
  end
  return map
end

local function decode_sym(r, map)
  local code, len = 0, 0
  while true do
    code = code | (get_bits(r, 1) << len)
    len = len + 1
    local s = map[(1 << len) | code]
    if s then return s end
    if len > 20 then error("compress: bad Huffman code") end
  end
end

---------------------------------------------------------------- LZ77 + Huffman
local MIN_MATCH, MAX_MATCH, WINDOW, MAX_CHAIN = 3, 258, 32768, 24
local MAXBITS = 15
-- symbols: 0-255 literals, 256 end, 257.. = match length - MIN_MATCH + 257
local NLIT = 257 + (MAX_MATCH - MIN_MATCH + 1)
-- distances coded as (bucket, extra bits): bucket = bit length of (dist - 1)
local NDIST = 17

local function lz77_tokens(s)
  local n = #s
  local head, prev = {}, {}
  local toks = {}
  local i = 1
  while i <= n do
    local best_len, best_dist = 0, 0
    if i + 2 <= n then
      local b1, b2, b3 = byte(s, i, i + 2)
      local h = (b1 << 16) | (b2 << 8) | b3
      local cand = head[h]
      local chain = 0
      while cand and i - cand <= WINDOW and chain < MAX_CHAIN do
        -- extend the match
        local l = 0
        local limit = math.min(MAX_MATCH, n - i + 1)
        while l < limit and byte(s, cand + l) == byte(s, i + l) do l = l + 1 end
        if l > best_len then
          best_len, best_dist = l, i - cand
          if l == limit then break end
        end
        cand = prev[cand]
        chain = chain + 1
      end
    end
    local step
    if best_len >= MIN_MATCH then
      toks[#toks + 1] = best_len
      toks[#toks + 1] = best_dist
      step = best_len
    else
      toks[#toks + 1] = -byte(s, i) - 1 -- literal, negative
      step = 1
    end
    -- insert the positions covered into the hash chains
    for j = i, math.min(i + step - 1, n - 2) do
      local b1, b2, b3 = byte(s, j, j + 2)
      local h = (b1 << 16) | (b2 << 8) | b3
      prev[j] = head[h]
      head[h] = j
    end
    i = i + step
  end
  return toks
end

local function bitlen(v)
  local n = 0
  while v > 0 do n = n + 1; v = v >> 1 end
  return n
end

local function lz_compress(s)
  local toks = lz77_tokens(s)
  local lf, df = {}, {}
  local i = 1
  while i <= #toks do
    local t = toks[i]
    if t < 0 then
      local sym = -t - 1
      lf[sym] = (lf[sym] or 0) + 1
      i = i + 1
    else
      local sym = t - MIN_MATCH + 257
      lf[sym] = (lf[sym] or 0) + 1
      local b = bitlen(toks[i + 1] - 1)
      df[b] = (df[b] or 0) + 1
      i = i + 2
    end
  end
  lf[256] = 1
  local llen = huffman_lengths(lf, NLIT, MAXBITS)
  local dlen = huffman_lengths(df, NDIST, MAXBITS)
  local lcodes = canonical(llen, NLIT, MAXBITS)
  local dcodes = canonical(dlen, NDIST, MAXBITS)
  local w = bit_writer()
  put_bits(w, #s, 32)
  for sym = 0, NLIT - 1 do put_bits(w, llen[sym], 4) end
  for sym = 0, NDIST - 1 do put_bits(w, dlen[sym], 4) end
  i = 1
  while i <= #toks do
    local t = toks[i]
    if t < 0 then
      local sym = -t - 1
      put_bits(w, lcodes[sym], llen[sym])
      i = i + 1
    else
      local sym = t - MIN_MATCH + 257
      put_bits(w, lcodes[sym], llen[sym])
      local d = toks[i + 1] - 1
      local b = bitlen(d)
      put_bits(w, dcodes[b], dlen[b])
      if b > 1 then put_bits(w, d & ((1 << (b - 1)) - 1), b - 1) end
      i = i + 2
    end
  end
  put_bits(w, lcodes[256], llen[256])
  return finish_bits(w), #toks
end

local function lz_decompress(z)
  local r = bit_reader(z)
  local n = get_bits(r, 32)
  local llen, dlen = {}, {}
  for sym = 0, NLIT - 1 do llen[sym] = get_bits(r, 4) end
  for sym = 0, NDIST - 1 do dlen[sym] = get_bits(r, 4) end
  local lmap = decoder(llen, NLIT, MAXBITS)
  local dmap = decoder(dlen, NDIST, MAXBITS)
  local out = {} -- byte values
  local o = 0
  while true do
    local sym = decode_sym(r, lmap)
    if sym < 256 then
      o = o + 1
      out[o] = sym
    elseif sym == 256 then
      break
    else
      local len = sym - 257 + MIN_MATCH
      local b = decode_sym(r, dmap)
      local d
      if b <= 1 then d = b else d = (1 << (b - 1)) | get_bits(r, b - 1) end
      local from = o - d
      for k = 1, len do out[o + k] = out[from + k - 1] end
      o = o + len
    end
  end
  if o ~= n then error("compress: LZ length mismatch " .. o .. " vs " .. n) end
  -- bytes to string in chunks
  local parts = {}
  for k = 1, o, 4096 do
    parts[#parts + 1] = char(table.unpack(out, k, math.min(k + 4095, o)))
  end
  return concat(parts)
end

---------------------------------------------------------------- LZW
local function lzw_compress(s)
  local dict, next_code = {}, 256
  for c = 0, 255 do dict[char(c)] = c end
  local w = bit_writer()
  local width = 9
  local cur = ""
  local codes = 0
  for i = 1, #s do
    local c = s:sub(i, i)
    local ext = cur .. c
    if dict[ext] then
      cur = ext
    else
      put_bits(w, dict[cur], width)
      codes = codes + 1
      if next_code < 65536 then
        dict[ext] = next_code
        next_code = next_code + 1
        if next_code > (1 << width) and width < 16 then width = width + 1 end
      end
      cur = c
    end
  end
  if cur ~= "" then put_bits(w, dict[cur], width); codes = codes + 1 end
  return finish_bits(w), codes
end

local function lzw_decompress(z, codes)
  local dict, next_code = {}, 256
  for c = 0, 255 do dict[c] = char(c) end
  local r = bit_reader(z)
  local width = 9
  local out = {}
  local prev = nil
  for _ = 1, codes do
    local code = get_bits(r, width)
    local entry = dict[code]
    if not entry then
      if code ~= next_code or not prev then error("compress: bad LZW code") end
      entry = prev .. prev:sub(1, 1)
    end
    out[#out + 1] = entry
    if prev and next_code < 65536 then
      dict[next_code] = prev .. entry:sub(1, 1)
      next_code = next_code + 1
    end
    -- the encoder widens one code earlier than the decoder sees the new entry
    if next_code + 1 > (1 << width) and width < 16 then width = width + 1 end
    prev = entry
  end
  return concat(out)
end

---------------------------------------------------------------- inputs
local WORDS = {}
for i = 1, 400 do
  local len = rand(8) + 1
  local cs = {}
  for k = 1, len do cs[k] = char(96 + rand(26)) end
  WORDS[i] = concat(cs)
end

local function gen_text(n)
  local parts, len = {}, 0
  local prev = 1
  while len < n do
    -- a word depends loosely on the previous one, so phrases repeat
    local w
    if rand(3) == 1 then w = WORDS[(prev * 7 + rand(5)) % #WORDS + 1] else w = WORDS[rand(rand(#WORDS))] end
    prev = #w + prev
    local sep = rand(12) == 1 and ".\n" or " "
    parts[#parts + 1] = w .. sep
    len = len + #w + #sep
  end
  return concat(parts):sub(1, n)
end

local function gen_log(n)
  local parts, len, t = {}, 0, 1700000000
  local LEVELS = { "INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR" }
  local PATHS = { "/api/users", "/api/orders", "/static/app.js", "/login", "/api/items/search" }
  while len < n do
    t = t + rand(3) - 1
    local line = string.format("%d %s %s %s %d %dms\n", t, LEVELS[rand(#LEVELS)],
      rand(2) == 1 and "GET" or "POST", PATHS[rand(#PATHS)], rand(4) == 1 and 404 or 200, rand(300))
    parts[#parts + 1] = line
    len = len + #line
  end
  return concat(parts):sub(1, n)
end

local function gen_binary(n)
  local t, v = {}, 0
  for i = 1, n do
    if rand(16) == 1 then v = rand(256) - 1 end
    t[i] = v
  end
  local parts = {}
  for k = 1, n, 4096 do parts[#parts + 1] = char(table.unpack(t, k, math.min(k + 4095, n))) end
  return concat(parts)
end

---------------------------------------------------------------- workload
local size = scaled(420000)
local inputs = { gen_text(size), gen_log(size), gen_binary(size), "", "a", string.rep("ab", 1000) }
local total_in, total_lz, total_lzw, checksum = 0, 0, 0, 0
for i, s in ipairs(inputs) do
  local z, ntok = lz_compress(s)
  local back = lz_decompress(z)
  if back ~= s then error("compress: LZ77 round trip failed on input " .. i) end
  local zw, codes = lzw_compress(s)
  local backw = lzw_decompress(zw, codes)
  if backw ~= s then error("compress: LZW round trip failed on input " .. i) end
  total_in = total_in + #s
  total_lz = total_lz + #z
  total_lzw = total_lzw + #zw
  checksum = (checksum * 1000003 + #z * 7 + #zw + ntok) % 2147483647
  for k = 1, #z, 97 do checksum = (checksum * 31 + byte(z, k)) % 2147483647 end
  if i <= 3 and #s > 1000 and (#z >= #s or #zw >= #s) then
    error("compress: input " .. i .. " did not shrink")
  end
end

print(string.format("compress: in=%d lz77huff=%d lzw=%d checksum=%d", total_in, total_lz, total_lzw, checksum))
