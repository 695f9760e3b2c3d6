-- %q produces a string that reads back as the same value.
local f = string.format
print(f("%q", "simple"))
print(f("%q", 'with "quotes" and \\ backslash'))
print(f("%q", "new\nline and tab\t and cr\r"))
print(f("%q", "zero\0byte and \1\2\127 and \200"))
print(f("%q", "\0009"))
print(f("%q", ""))
print(f("%q", 42), f("%q", -7), f("%q", math.mininteger), f("%q", math.maxinteger))
print(f("%q", 1.5), f("%q", 1.0), f("%q", -0.0), f("%q", 0.1))
print(f("%q", 1 / 0), f("%q", -1 / 0), f("%q", 0 / 0))
print(f("%q", true), f("%q", false), f("%q", nil))
print(pcall(f, "%q", {}))
print(pcall(f, "%10q", "x"))
-- round trip through load
local samples = {"a\nb", "\0\1\2", "quote\"s", "\\", "tab\t", ("\255"):rep(3), "x\r\ny"}
for i, s in ipairs(samples) do
  local back = load("return " .. f("%q", s))()
  print(i, back == s, #back)
end
for _, n in ipairs({0.1, 1 / 3, -2.5e-300, 1e300, math.mininteger, 12345}) do
  local back = load("return " .. f("%q", n))()
  print(n, back == n, math.type(back) == math.type(n))
end
