-- The generic for as compiled code runs it: pairs() without __pairs is iterated without a
-- call (TFORCALL calls next's step directly, TFORLOOP loops), and every other case steps
-- through the interpreter: other iterators (ipairs, closures, a callable table), __pairs,
-- an iterator changed between loops, a traversal error, and a loop deep in the stack (the
-- call's slots must be grown). Sums are order-independent so the output does not depend on
-- the traversal order. Each loop runs often enough for its function to be compiled.
local function sum_pairs(t)
  local ks, vs, n = 0, 0, 0
  for k, v in pairs(t) do
    n = n + 1
    if type(k) == "number" then ks = ks + k end
    if type(v) == "number" then vs = vs + v end
  end
  return n, ks, vs
end

local function one_var(t) local n = 0; for k in pairs(t) do n = n + 1 end; return n end
local function three_vars(t)
  local n, nils = 0, 0
  for k, v, extra in pairs(t) do n = n + 1; if extra == nil then nils = nils + 1 end end
  return n, nils
end
local function with_next(t) local n = 0; for k, v in next, t do n = n + v end; return n end
local function with_next_from(t, k0) local n = 0; for k, v in next, t, k0 do n = n + 1 end; return n end

local mixed = {10, 20, 30, x = 1, y = 2, [7.5] = 3, [true] = 4}
local big = {}
for i = 1, 1000 do big[i] = i; big["k" .. i] = i end
local r = {}
for round = 1, 60 do
  r[1] = table.concat({sum_pairs(mixed)}, " ")
  r[2] = table.concat({sum_pairs(big)}, " ")
  r[3] = table.concat({sum_pairs({})}, " ")
  r[4] = one_var(big)
  r[5] = table.concat({three_vars(mixed)}, " ")
  r[6] = with_next({5, 6, 7})
  r[7] = with_next_from({a = 1, b = 2, c = 3}, nil)
end
print(table.unpack(r))

-- iterators other than next: stepped
local function with_ipairs(t) local s = 0; for i, v in ipairs(t) do s = s + i * v end; return s end
local function range(n) local i = 0; return function() i = i + 1; if i <= n then return i end end end
local function with_closure(n) local s = 0; for i in range(n) do s = s + i end; return s end
local callable = setmetatable({}, {__call = function(self, _, i) i = i + 1; if i <= 5 then return i end end})
local function with_callable() local s = 0; for i in callable, nil, 0 do s = s + i end; return s end
for _ = 1, 60 do r[1] = with_ipairs({1, 2, 3, 4}); r[2] = with_closure(10); r[3] = with_callable() end
print(r[1], r[2], r[3])
-- ipairs: compiled over a table without a metatable and an integer control value (the hash
-- part included, up to the first nil); a metatable (__index counts) or a float is stepped
local sparse = {1, 2, 3}; sparse[5] = 5; sparse[4] = 4; sparse[7] = 7
local withmeta = setmetatable({1, 2}, {__index = function(t, i) if i <= 4 then return i * 10 end end})
local ipairs_iter = ipairs({})
local function from(f, t, init) local s = 0; for i, v in f, t, init do s = s + i * v end; return s end
for _ = 1, 60 do
  r[1] = with_ipairs(sparse); r[2] = with_ipairs(withmeta)
  r[3] = from(ipairs_iter, {4, 5, 6}, 0.0); r[4] = from(ipairs_iter, {4, 5, 6}, 1)
  r[5] = from(ipairs_iter, {4, 5, 6}, math.maxinteger)
end
print(r[1], r[2], r[3], r[4], r[5], pcall(from, ipairs_iter, {1}, "x"))

-- __pairs: pairs returns another iterator
local proxied = setmetatable({}, {__pairs = function(t) return function(_, k) if not k then return 1, "one" end end, t, nil end})
for _ = 1, 60 do r[1] = table.concat({sum_pairs(proxied)}, " ") end
print(r[1])

-- the same loop sees next, then another iterator, then next again
local function generic(f, s, init) local n = 0; for k in f, s, init do n = n + 1 end; return n end
local counts = {}
for i = 1, 90 do
  if i % 3 == 0 then counts[#counts + 1] = generic(ipairs({1, 2}), {1, 2}, 0)
  else counts[#counts + 1] = generic(next, {1, 2, 3}) end
end
print(table.concat(counts, "", 1, 9), counts[90])

-- assigning existing fields during the traversal is allowed; a key that is not in the table
-- is an error
local function double_all(t) for k, v in pairs(t) do t[k] = v * 2 end; return t end
local d
for _ = 1, 60 do d = double_all({a = 1, b = 2, c = 3}) end
print(d.a + d.b + d.c)
local function bad_next() for k, v in next, {a = 1}, "nokey" do end end
print(pcall(bad_next))
print(pcall(function() for k in pairs(nil) do end end))

-- pairs at the bottom of a deep recursion (the stack grows under the loop)
local function deep(n, t)
  if n == 0 then local s = 0; for k, v in pairs(t) do s = s + v end; return s end
  return deep(n - 1, t) + 0
end
for _ = 1, 3 do r[1] = deep(150, {1, 2, 3, 4}) end
print(r[1], deep(7000, {5, 5}))

-- removing the current field while traversing (allowed: assigning nil)
local function drain(t) local n = 0; for k in pairs(t) do t[k] = nil; n = n + 1 end; return n, next(t) end
for _ = 1, 30 do r[1], r[2] = drain({1, 2, 3, a = 1, b = 2}) end
print(r[1], r[2])
