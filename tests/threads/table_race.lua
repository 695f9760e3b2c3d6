-- Unsynchronised stores and loads on one table, on upvalues and on a global table from
-- several threads at once, no lock anywhere: which values are seen is unspecified, but
-- every value read is well formed and the runtime neither crashes nor hangs. The threads
-- also replace the shared table now and then (an upvalue store), so tables keep growing
-- from empty while others read them: array and hash parts resize under the readers.
-- arg[1]: rounds (the soak's regression tests run a short version).
local N, ROUNDS = 4, tonumber(arg and arg[1]) or 30000
local shared = {}
local up = 0
G_race = {}
local names = {}
for i = 1, 64 do names[i] = "k" .. i end

local function check(v)
  local ty = type(v)
  if ty == "table" then
    assert(v.tag == "box" and math.type(v[1]) == "integer", "malformed table")
  elseif ty == "string" then
    assert(#v > 1 and v:sub(1, 1) == "k", "malformed string")
  elseif ty ~= "nil" and ty ~= "number" and ty ~= "boolean" then
    error("unexpected type " .. ty)
  end
end

local function walk(t)
  local n = 0
  for k, v in pairs(t) do
    check(k)
    check(v)
    n = n + 1
  end
  return n
end

local hs = {}
for id = 1, N do
  hs[id] = thread.spawn(function()
    for r = 1, ROUNDS do
      local i = (r * 7 + id * 13) % 300 + 1
      local name = names[(r * 5 + id) % 64 + 1]
      local m = r % 8
      if m == 0 then shared[i] = {i, tag = "box"}
      elseif m == 1 then shared[name] = name
      elseif m == 2 then shared[i] = r + 0.5
      elseif m == 3 then shared[name] = nil; shared[i] = nil
      elseif m == 4 then up = {r, tag = "box"}
      elseif m == 5 then up = r
      elseif m == 6 then
        local even = r % 16 == 6   -- not inline: lua5.4 miscompiles t[a == b] = v
        shared[even] = {r, tag = "box"}
      else shared[i + 0.25] = name end
      check(shared[i]); check(shared[name]); check(up); check(shared.k1); check(shared[true])
      local t = shared
      t[#t + 1] = i
      check(#t)
      G_race[name] = shared[i]
      check(G_race[name])
      if r % 97 == 0 then
        local ok, err = pcall(walk, shared)
        -- a racing resize may drop the key a traversal resumes from
        assert(ok or tostring(err):find("invalid key to 'next'"), err)
      end
      if r % 1500 == 0 then shared = {} end
    end
  end)
end
for id = 1, N do hs[id]:join() end
check(up)
print("ok", walk(G_race) <= 64)
