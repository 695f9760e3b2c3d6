-- Character classes %a %d %s %w %p %l %u %x %c %g and their complements.
local all = {}
for i = 0, 127 do all[#all + 1] = string.char(i) end
local ascii = table.concat(all)
for _, cls in ipairs({"%a", "%d", "%s", "%w", "%p", "%l", "%u", "%x", "%c", "%g",
                      "%A", "%D", "%S", "%W", "%P", "%L", "%U", "%X", "%C", "%G"}) do
  local kept = ascii:gsub("[^" .. cls .. "]", "")
  local printable = kept:gsub("%c", function(c) return string.format("\\%d", c:byte()) end)
  print(cls, #kept, printable)
end
-- sets with ranges and classes
print(("Hello_World 42!"):gsub("[%a_]", "."))
print(("Hello_World 42!"):gsub("[^%a_]", "."))
print(("a-b]c^d"):gsub("[%]%-^]", "#"))
print(("abcxyz"):gsub("[a-cx-z]", "*"))
print(("a]b"):gsub("[]]", "!"))
print(("a^b"):gsub("[b^]", "!"))
print(("0123456789abcdefABCDEFg"):gsub("%x", ""))
-- the . class matches any byte including \0 and \n
print(("a\0b\nc"):gsub(".", "x"))
-- quantifiers
print(("aaa"):match("a?a?a?a?"), ("<a><b>"):match("<.->"), ("<a><b>"):match("<.*>"))
print(("  x"):match("^%s*()"), ("abc123"):match("%a*"), ("abc123"):match("%d+"))
