-- Escape sequences in short strings.
local s = "tab:\tend"
print(s, #s)
print("newline:\nsecond")
print("backslash: \\ quote: \" apostrophe: \'")
print('single quoted "double" inside')
print("hex: \x41\x42\x43 dec: \65\066\0671")
print("utf8: \u{48}\u{49} \u{E9} \u{20AC}", #"\u{20AC}", #"\u{7FFFFFFF}")
print("bell/backspace bytes:", ("\a\b\f\v\r"):byte(1, -1))
print("zero byte inside:", #"a\0b", ("a\0b"):byte(2))

-- \z skips the following whitespace including newlines
local z = "abc\z
           def"
print(z)

-- escaped newline keeps a newline
local nl = "one\
two"
print(nl, #nl)

-- decimal escapes take at most three digits
print(#"\1234", ("\1234"):byte(1, -1))

-- strings are byte strings: any byte is allowed
local all = {}
for i = 0, 255 do all[#all + 1] = string.char(i) end
local bin = table.concat(all)
print(#bin, bin:byte(1), bin:byte(256))
local sum = 0
for i = 1, #bin do sum = sum + bin:byte(i) end
print("byte sum", sum)
