-- textindex.lua: a full-text search engine. Generates a corpus of documents
-- (Zipf-distributed words with inflections, capitalisation and punctuation),
-- tokenizes with patterns, lower-cases and stems, builds an inverted index with
-- positional postings, then answers boolean AND/OR queries (sorted-list merge),
-- phrase queries (position matching) and TF-IDF ranked top-k queries. A sample
-- of the answers is checked against a brute-force scan of the documents.
-- Stands for: search engines, log analysis, text-processing pipelines.
-- Usage: textindex.lua [scale]

local scale = tonumber(arg and arg[1]) or 1
local function scaled(n)
  local v = math.floor(n * scale + 0.5)
  if v < 1 then v = 1 end
  return v
end

local seed = 2024
local function rand(n)
  seed = (seed * 6364136223846793005 + 1) & 0x7fffffffffffffff
  return (seed >> 30) % n + 1
end

---------------------------------------------------------------- corpus
local SYL = { "ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "den", "var", "el", "qu",
  "is", "on", "tra", "bel", "cor", "fin", "gam", "hul" }
local SUFFIX = { "", "", "", "", "s", "ing", "ed", "er" }
local V = 2500
local vocab, seen = {}, {}
while #vocab < V do
  local parts = {}
  for i = 1, rand(3) + 1 do parts[i] = SYL[rand(#SYL)] end
  local w = table.concat(parts)
  if not seen[w] then seen[w] = true; vocab[#vocab + 1] = w end
end

local function zipf_word()
  local u = rand(1000000) / 1000000
  return vocab[math.floor(u * u * u * (V - 1)) + 1]
end

local function make_document()
  local sentences = {}
  for s = 1, rand(6) + 2 do
    local words = {}
    for w = 1, rand(12) + 3 do
      local word = zipf_word() .. SUFFIX[rand(#SUFFIX)]
      if w == 1 then word = word:sub(1, 1):upper() .. word:sub(2) end
      words[w] = word
      if w > 1 and rand(8) == 1 then words[w] = word .. "," end
    end
    local ends = { ".", ".", ".", "!", "?" }
    sentences[s] = table.concat(words, " ") .. ends[rand(#ends)]
  end
  return table.concat(sentences, " ")
end

---------------------------------------------------------------- analysis
local stem_cache = {}
local function stem(w)
  local s = stem_cache[w]
  if s then return s end
  s = w
  if #s > 5 and s:sub(-3) == "ing" then s = s:sub(1, -4)
  elseif #s > 4 and s:sub(-2) == "ed" then s = s:sub(1, -3)
  elseif #s > 4 and s:sub(-2) == "er" then s = s:sub(1, -3)
  elseif #s > 3 and s:sub(-1) == "s" and s:sub(-2) ~= "ss" then s = s:sub(1, -2)
  end
  stem_cache[w] = s
  return s
end

local function analyze(text)
  local terms = {}
  for word in text:gmatch("%a+") do
    terms[#terms + 1] = stem(word:lower())
  end
  return terms
end

---------------------------------------------------------------- index
-- index[term] = { docs = {d1, d2, ...} (ascending), tf = {count,...}, pos = {{p,...},...} }
local function build_index(docs)
  local index = {}
  local lengths = {}
  for d = 1, #docs do
    local terms = analyze(docs[d])
    lengths[d] = #terms
    for p = 1, #terms do
      local t = terms[p]
      local e = index[t]
      if not e then
        e = { docs = {}, tf = {}, pos = {} }
        index[t] = e
      end
      local n = #e.docs
      if e.docs[n] ~= d then
        n = n + 1
        e.docs[n] = d
        e.tf[n] = 0
        e.pos[n] = {}
      end
      e.tf[n] = e.tf[n] + 1
      local pl = e.pos[n]
      pl[#pl + 1] = p
    end
  end
  return index, lengths
end

local EMPTY = { docs = {}, tf = {}, pos = {} }

local function intersect(a, b)
  local out = {}
  local i, j = 1, 1
  local na, nb = #a, #b
  while i <= na and j <= nb do
    local x, y = a[i], b[j]
    if x == y then
      out[#out + 1] = x
      i = i + 1
      j = j + 1
    elseif x < y then
      i = i + 1
    else
      j = j + 1
    end
  end
  return out
end

local function union(a, b)
  local out = {}
  local i, j = 1, 1
  local na, nb = #a, #b
  while i <= na or j <= nb do
    local x, y = a[i], b[j]
    if y == nil or (x ~= nil and x < y) then
      out[#out + 1] = x; i = i + 1
    elseif x == nil or y < x then
      out[#out + 1] = y; j = j + 1
    else
      out[#out + 1] = x; i = i + 1; j = j + 1
    end
  end
  return out
end

local function phrase(index, t1, t2)
  local e1, e2 = index[t1] or EMPTY, index[t2] or EMPTY
  local out = {}
  local i, j = 1, 1
  while i <= #e1.docs and j <= #e2.docs do
    local x, y = e1.docs[i], e2.docs[j]
    if x == y then
      local p1, p2 = e1.pos[i], e2.pos[j]
      local a, b = 1, 1
      while a <= #p1 and b <= #p2 do
        local want = p1[a] + 1
        if p2[b] == want then
          out[#out + 1] = x
          break
        elseif p2[b] < want then
          b = b + 1
        else
          a = a + 1
        end
      end
      i = i + 1
      j = j + 1
    elseif x < y then
      i = i + 1
    else
      j = j + 1
    end
  end
  return out
end

local function ranked(index, lengths, terms, k)
  local ndocs = #lengths
  local scores = {}
  local touched = {}
  for _, t in ipairs(terms) do
    local e = index[t]
    if e then
      local idf = math.log(ndocs / #e.docs)
      for i = 1, #e.docs do
        local d = e.docs[i]
        if not scores[d] then scores[d] = 0; touched[#touched + 1] = d end
        scores[d] = scores[d] + (e.tf[i] / lengths[d]) * idf
      end
    end
  end
  table.sort(touched, function(a, b)
    if scores[a] ~= scores[b] then return scores[a] > scores[b] end
    return a < b
  end)
  local top = {}
  for i = 1, math.min(k, #touched) do top[i] = touched[i] end
  return top, scores
end

---------------------------------------------------------------- brute force checks
local function brute_and(doc_terms, t1, t2)
  local out = {}
  for d = 1, #doc_terms do
    local has1, has2 = false, false
    for _, t in ipairs(doc_terms[d]) do
      if t == t1 then has1 = true end
      if t == t2 then has2 = true end
    end
    if has1 and has2 then out[#out + 1] = d end
  end
  return out
end

local function brute_phrase(doc_terms, t1, t2)
  local out = {}
  for d = 1, #doc_terms do
    local ts = doc_terms[d]
    for p = 1, #ts - 1 do
      if ts[p] == t1 and ts[p + 1] == t2 then out[#out + 1] = d; break end
    end
  end
  return out
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

---------------------------------------------------------------- workload
local ndocs = scaled(2500)
local docs = {}
local chars = 0
for d = 1, ndocs do
  docs[d] = make_document()
  chars = chars + #docs[d]
end
local index, lengths = build_index(docs)
local nterms = 0
for _ in pairs(index) do nterms = nterms + 1 end

-- queries pick frequent and rare stems
local function query_term()
  return stem(zipf_word())
end

local checksum, hits = 0, 0
local nqueries = scaled(1200)
local doc_terms -- analysed lazily for the brute-force checks
for q = 1, nqueries do
  local t1, t2, t3 = query_term(), query_term(), query_term()
  local a = intersect((index[t1] or EMPTY).docs, (index[t2] or EMPTY).docs)
  local o = union((index[t1] or EMPTY).docs, (index[t3] or EMPTY).docs)
  local ph = phrase(index, t1, t2)
  local top = ranked(index, lengths, { t1, t2, t3 }, 10)
  hits = hits + #a + #o + #ph + #top
  checksum = (checksum * 31 + #a * 7 + #o * 3 + #ph + (top[1] or 0)) % 1000000007
  if q % 120 == 1 then
    if not doc_terms then
      doc_terms = {}
      for d = 1, ndocs do doc_terms[d] = analyze(docs[d]) end
    end
    if not same(a, brute_and(doc_terms, t1, t2)) then error("textindex: AND query mismatch") end
    if not same(ph, brute_phrase(doc_terms, t1, t2)) then error("textindex: phrase query mismatch") end
    local u2 = union(brute_and(doc_terms, t1, t1), brute_and(doc_terms, t3, t3))
    if not same(o, u2) then error("textindex: OR query mismatch") end
  end
end

-- a known tiny corpus
do
  local idx, lens = build_index({ "The cats are running.", "A cat ran; cats sleep!", "Dogs chase cats running fast" })
  local r = intersect(idx["cat"].docs, idx["runn"].docs)
  if not same(r, { 1, 3 }) then error("textindex: tiny corpus AND gave " .. table.concat(r, ",")) end
  if not same(phrase(idx, "cat", "runn"), { 3 }) then error("textindex: tiny corpus phrase") end
  if lens[2] ~= 5 then error("textindex: tiny corpus length") end
end

print(string.format("textindex: docs=%d chars=%d terms=%d queries=%d hits=%d checksum=%d",
  ndocs, chars, nterms, nqueries, hits, checksum))
