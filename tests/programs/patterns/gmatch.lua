-- string.gmatch with and without captures, anchors and init.
local words = {}
for w in ("one two  three\tfour"):gmatch("%S+") do words[#words + 1] = w end
print(#words, table.concat(words, "|"))
for k, v in ("a=1, b=2, c=3"):gmatch("(%w+)=(%w+)") do io.write(k, "->", v, " ") end
print()
for pos, ch in ("hello"):gmatch("()(l)") do io.write(pos, ch, " ") end
print()
-- an empty match advances by one character
local n = 0
for _ in ("abc"):gmatch("") do n = n + 1 end
print("empty matches", n)
for x in ("abc"):gmatch("x*") do io.write("[", x, "]") end
print()
-- init argument (5.4)
for w in ("one two three"):gmatch("%a+", 5) do io.write(w, ";") end
print()
for w in ("one two three"):gmatch("%a+", -5) do io.write(w, ";") end
print()
-- '^' is no anchor in gmatch: it is an ordinary character there
local anchored = {}
for w in ("aaa"):gmatch("^a") do anchored[#anchored + 1] = w end
print("caret matches in aaa", #anchored)
for w in ("^a-^b"):gmatch("^.") do io.write(w, " ") end
print()
-- numbers in a string summed
local sum = 0
for num in ("10 apples, 25 pears and 7 plums"):gmatch("%d+") do sum = sum + tonumber(num) end
print("sum", sum)
-- words frequency, sorted for a deterministic output
local text = "the cat and the hat and the bat"
local freq = {}
for w in text:gmatch("%a+") do freq[w] = (freq[w] or 0) + 1 end
local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do io.write(k, "=", freq[k], " ") end
print()
-- an iterator can be stopped early and a new one started
local it = ("a1b2c3"):gmatch("%a%d")
print(it(), it())
local it2 = ("a1b2c3"):gmatch("%a%d")
print(it2(), it(), it())
-- gmatch over a CSV line with empty fields
local fields = {}
for field in ("a,,b,"):gmatch("([^,]*),?") do fields[#fields + 1] = "<" .. field .. ">" end
print(table.concat(fields))
