-- string.match: captures, position captures, anchors, back-references.
print(("hello world"):match("%a+"))
print(("key = value"):match("(%w+)%s*=%s*(%w+)"))
print(("2024-01-15"):match("(%d+)-(%d+)-(%d+)"))
print(("abc"):match("()b()"))
print(("  trim me  "):match("^%s*(.-)%s*$") .. "|")
print(("hello"):match("^(h)(e)(l)(l)(o)$"))
print(("hello"):match("x"), ("hello"):match("^ello"))
print(("abcabc"):match("(a)(b)(c)%1%2%3"))
print(("say 'hi' or \"bye\""):match("([\"'])(.-)%1"))
print(("[[nested]]"):match("%[(%b[])%]"))
print(("a,b,,c"):match("^(.-),(.-),(.-),(.-)$"))
print(("number: 42.5e3"):match("(%d+%.?%d*[eE]?%d*)"))
print(("abc"):match("((a)(b))"))
print(("aaa"):match("a-"), ("aaa"):match("a-$"), ("aaa"):match("a*"), ("aaa"):match("a+?"))
print(("x=1, y=2"):match("y=(%d)"), ("x=1, y=2"):match("(%a)=%d", 4))
print(("hello"):match(".", -2), ("hello"):match("()", 10))
print(("f(a(b)c)d"):match("%b()"))
print(("THE (quick) fox"):match("%f[%a]%a+", 5))
print(("empty"):match("()"))
-- match with init beyond the length
print(("abc"):match(".*", 4), ("abc"):match(".*", 5))
-- too many captures / invalid back-reference
print(pcall(string.match, "a", "%1"))
print(pcall(string.match, "a", "(()"))
-- parsing a simple INI-like text line by line
local text = "[main]\nname = tandem\nversion = 5\n\n[extra]\nflag = yes\n"
local section
for line in text:gmatch("[^\n]+") do
  local s = line:match("^%[(%w+)%]$")
  if s then
    section = s
  else
    local k, v = line:match("^(%w+)%s*=%s*(.-)%s*$")
    if k then print(section .. "." .. k, v) end
  end
end
