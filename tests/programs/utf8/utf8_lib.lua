-- The utf8 library: encoding, decoding, lengths, offsets, iteration, and its errors.
local s = "héllo wörld ✓ 𝄞"
print(utf8.len(s), #s)
print(utf8.char(72, 233, 0x2713, 0x1D11E, 0x7FFFFFFF):byte(1, -1))
print(utf8.codepoint(s, 1, -1))
print(utf8.codepoint(s, 2))
for p, c in utf8.codes("añ✓") do print(p, c) end
print(utf8.offset(s, 3), utf8.offset(s, -1), utf8.offset(s, 0, 3), utf8.offset(s, 100))
print(utf8.len("\xff"), utf8.len("abc\xe4", 1, -1))
print(utf8.len(s, 3), utf8.len(s, -4), utf8.len("", 1))
print(#utf8.charpattern)
local n = 0
for ch in s:gmatch(utf8.charpattern) do n = n + 1 end
print("chars via charpattern", n)
print(pcall(utf8.codepoint, "\xff"))
print(pcall(utf8.char, -1))
print(pcall(utf8.len, s, 100))
print(pcall(utf8.offset, s, 1, 3))
print(utf8.len("\u{D800}", 1, -1, true), utf8.len("\u{D800}"))
print(pcall(function() for _ in utf8.codes("a\xffb") do end end))
