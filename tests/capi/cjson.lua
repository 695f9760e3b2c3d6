-- lua-cjson (Debian's cjson.so): encode/decode round trips on nested data, options, errors.
-- Objects are printed through a key-sorted dump so hash order does not matter.
local cjson = require "cjson"

local function dump(v, ind)
  ind = ind or ""
  if type(v) ~= "table" then
    if v == cjson.null then return "null" end
    return type(v) == "string" and string.format("%q", v) or tostring(v)
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local out = {}
  for _, k in ipairs(keys) do out[#out + 1] = ind .. "  " .. tostring(k) .. "=" .. dump(v[k], ind .. "  ") end
  return "{\n" .. table.concat(out, "\n") .. "\n" .. ind .. "}"
end

local doc = [==[{
  "name": "tandem", "version": 1.5, "count": 42, "neg": -17, "big": 12345678901234,
  "exp": 1e-7, "flags": [true, false, null], "empty_arr": [], "empty_obj": {},
  "nested": {"a": {"b": {"c": [1, [2, [3, [4]]]]}}},
  "text": "line\nbreak \"quoted\" tab\t uni \u00e9\u4e2d \ud83d\ude00 slash \/"
}]==]
local t = cjson.decode(doc)
print(dump(t))
print(math.type(t.count), math.type(t.version), math.type(t.big))

-- round trips: arrays keep order, so encode is deterministic for them
local arrays = {
  {1, 2, 3}, {"a", {"b", {"c"}}}, {1.5, -0.25, 1e100, 2^53}, {true, false},
  {{}, {{}}}, {"\0\1\2\31", "é", "\127"},
}
for _, a in ipairs(arrays) do
  local s = cjson.encode(a)
  print(s, dump(cjson.decode(s)) == dump(a))
end
for _, v in ipairs{1, -1, 0.1, 3.14159, "s", true, cjson.null, 1/3} do print(cjson.encode(v)) end
print(cjson.encode({key = {1, 2, {inner = "x"}}}))
print(cjson.encode(setmetatable({}, {__index = function() return 1 end})))

-- sparse arrays and options
print(pcall(cjson.encode, {[1] = 1, [2] = 2, [10] = 10}))
print(cjson.encode_sparse_array(true))
print(cjson.encode({[1] = 1, [2] = 2, [10] = 10}))
print(cjson.encode_number_precision(5), cjson.encode(math.pi))
cjson.encode_number_precision(14)
print(cjson.decode_invalid_numbers(), cjson.encode_max_depth(), cjson.decode_max_depth())

-- a large document: many records, round trip, totals
local recs = {}
for i = 1, 2000 do
  recs[i] = {id = i, name = "item" .. i, tags = {"t" .. i % 7, "u" .. i % 3}, price = i * 0.25, ok = i % 2 == 0}
end
local big = cjson.encode(recs)
local back = cjson.decode(big)
local sum, tags = 0, 0
for _, r in ipairs(back) do sum = sum + r.price; tags = tags + #r.tags end
print(#big, #back, sum, tags, back[1234].name, back[2000].ok)

-- errors, as lua5.4 reports them
for _, bad in ipairs{"{bad", "[1,2", '{"a" 1}', "nul", "1e", '"\\x"', "[1,]", ""} do
  print(pcall(cjson.decode, bad))
end
print(pcall(cjson.encode, {f = print}))
local deep = {}
local cur = deep
for _ = 1, 1100 do cur[1] = {}; cur = cur[1] end
print(pcall(cjson.encode, deep))
print(pcall(cjson.decode, string.rep("[", 1100) .. string.rep("]", 1100)))
print(pcall(cjson.decode))
print(pcall(cjson.decode, {}))
local safe = require "cjson.safe"
print(safe.decode("{bad"))
local c2 = cjson.new()
print(c2.encode({1, 2}), c2 ~= cjson)
