-- Weak keys and ephemerons (issue 15): __mode = "k" tables were never cleared, and a
-- weak-keyed cache whose value refers to its key must not keep the key alive (lua5.4's
-- ephemeron tables, manual 2.5.4).
local wk = setmetatable({}, {__mode = "k"})
local keep = {}

local function fill()
  wk[{}] = 1
  wk[function() end] = 2
  wk[coroutine.create(function() end)] = 3
  wk.str = "strings are values"
  wk[7] = "numbers too"
  wk[keep] = "kept"
end
fill()
collectgarbage()
local n = 0
for k, v in pairs(wk) do n = n + 1 end
print("entries", n, wk.str, wk[7], wk[keep])


-- chains through several ephemeron entries: a -> b -> c, alive only while a is
local eph = setmetatable({}, {__mode = "k"})
local root = {}
local function chain()
  local a, b, c = {}, {}, {}
  eph[a] = b; eph[b] = c; eph[c] = "end"
  root.a = a
end
chain()
collectgarbage()
local len = 0
local x = root.a
while type(x) == "table" do len = len + 1; x = eph[x] end
print("chain length", len, x)
root.a = nil
local rounds = 0
repeat collectgarbage(); rounds = rounds + 1 until next(eph) == nil
print("chain gone", rounds >= 1)

-- two ephemeron tables pointing into each other
local e1 = setmetatable({}, {__mode = "k"})
local e2 = setmetatable({}, {__mode = "k"})
local function cross() local p, q = {}, {}; e1[p] = q; e2[q] = p end
cross()
collectgarbage()
print("cross", next(e1), next(e2))

-- weak keys and values at once
local kv = setmetatable({}, {__mode = "kv"})
local function fill2() kv[{}] = keep; kv[keep] = {}; kv[1] = {}; kv.s = {} end
fill2()
collectgarbage()
print("kv", next(kv))

-- the hang case
local w = setmetatable({}, {__mode = "k"})
local function put() w[{}] = true end
put()
repeat collectgarbage() until next(w) == nil
print("done")
