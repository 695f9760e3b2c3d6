-- string.find: plain and pattern searches, init positions, captures.
local s = "the quick brown fox jumps over the lazy dog"
print(s:find("quick"))
print(s:find("the", 2))
print(s:find("the", -8))
print(s:find("cat"))
print(s:find("o", 1, true), s:find("o", 15, true))
print(s:find(""), s:find("", 10), s:find("", #s + 1), s:find("", #s + 2))
print(s:find("(%a+) (%a+)$"))
print(s:find("%s"), s:find("%s", -4))
print(("a.b.c"):find(".", 1, true), ("a.b.c"):find("%."), ("a.b.c"):find("."))
print(("a+b"):find("+", 1, true), ("x*y"):find("*", 1, true))
print(("[x]"):find("[", 1, true))
print(("hello"):find("l+"))
print(("hello"):find("xyz", 1, true))
print(("aaa"):find("a", -10))
print(("abc"):find("b", 100))
-- find with anchors
print(("hello"):find("^h"), ("hello"):find("^e"), ("hello"):find("o$"), ("hello"):find("^hello$"))
-- special characters in plain mode
print(("100%"):find("%", 1, true), ("a^b"):find("^b", 1, true), ("a$"):find("$", 1, true))
-- counting occurrences with find in a loop
local count, pos = 0, 1
while true do
  local st, en = s:find("o", pos, true)
  if not st then break end
  count, pos = count + 1, en + 1
end
print("o count", count)
-- malformed patterns raise errors
print(pcall(string.find, "x", "[a"))
print(pcall(string.find, "x", "%"))
print(pcall(string.find, "x", "(x"))
