-- lua-cjson decoding a large document (about 4 MB: 20,000 records of numbers, strings,
-- booleans and nested arrays), several times; the encoding that makes it is not timed.
-- Prints a checksum of the decoded data, then the decoding time.
local cjson = require "cjson"
local REPS = math.tointeger(tonumber(arg and arg[1]) or 10)
local recs = {}
for i = 1, 20000 do
  recs[i] = {id = i, name = "record number " .. i, price = i * 0.25, ok = i % 3 == 0,
             tags = {"alpha", "beta", "t" .. i % 17}, pos = {x = i % 100, y = i % 37, z = -i},
             text = "escapes \"quoted\" and \\ backslash \t tab " .. i}
end
local doc = cjson.encode(recs)
local sum = 0
local t0 = os.clock()
for _ = 1, REPS do
  local back = cjson.decode(doc)
  for j = 1, #back, 97 do
    local r = back[j]
    sum = sum + r.id + r.pos.z + #r.tags + #r.name
  end
end
local t1 = os.clock()
print(#doc, string.format("%d", sum))
print(string.format("elapsed: %.4f", t1 - t0))
