-- table.sort with the default order, comparators and many elements.
local function show(t) return table.concat(t, " ") end
local t = {5, 2, 8, 1, 9, 3}
table.sort(t)
print(show(t))
table.sort(t, function(a, b) return a > b end)
print(show(t))
local s = {"banana", "apple", "Cherry", "date"}
table.sort(s)
print(show(s))
table.sort(s, function(a, b) return a:lower() < b:lower() end)
print(show(s))
-- floats and integers mixed
local m = {3, 1.5, -2, 2^53, 0.25, -7}
table.sort(m)
print(show(m))
-- records sorted by several keys (keys unique so the result is determined)
local people = {
  {name = "ann", age = 31}, {name = "bob", age = 25}, {name = "cid", age = 31},
  {name = "dee", age = 25}, {name = "eve", age = 40},
}
table.sort(people, function(a, b)
  if a.age ~= b.age then return a.age < b.age end
  return a.name < b.name
end)
for _, p in ipairs(people) do io.write(p.name, ":", p.age, " ") end
print()
-- many elements: a pseudo-random permutation (own LCG, deterministic)
local seed = 12345
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
local big = {}
for i = 1, 5000 do big[i] = i end
for i = #big, 2, -1 do
  local j = rnd(i) + 1
  big[i], big[j] = big[j], big[i]
end
table.sort(big)
local okasc = true
for i = 1, #big do if big[i] ~= i then okasc = false end end
print("5000 sorted", okasc)
table.sort(big, function(a, b) return a > b end)
print("descending", big[1], big[2500], big[5000])
-- sorting strings of many lengths
local words = {}
for i = 1, 300 do words[i] = string.rep(string.char(97 + rnd(26)), 1 + rnd(5)) .. i end
table.sort(words)
local okw = true
for i = 2, #words do if words[i - 1] > words[i] then okw = false end end
print("words sorted", okw, #words)
-- already sorted and reverse sorted inputs
local asc, desc = {}, {}
for i = 1, 1000 do asc[i] = i; desc[i] = 1001 - i end
table.sort(asc); table.sort(desc)
print(asc[1], asc[1000], desc[1], desc[1000])
-- errors: invalid order function and incomparable values
-- (which operands get compared first depends on the algorithm: print no order)
local oks, es = pcall(table.sort, {1, "x", 2})
print(oks, es:find("attempt to compare", 1, true) ~= nil)
-- an inconsistent comparator may raise "invalid order function" or not, but
-- must not crash
local ok = pcall(table.sort, {5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4}, function(a, b) return true end)
print("bad comparator survived", ok == true or ok == false)
print(pcall(table.sort, {3, 2, 1}, 42))
