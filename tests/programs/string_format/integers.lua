-- string.format integer conversions with flags, widths and precisions.
local f = string.format
print(f("%d %i %u", 42, -42, 42))
print(f("[%5d] [%-5d] [%05d] [%+d] [% d] [%+5d]", 42, 42, 42, 42, 42, -42))
print(f("%-5d|", 7))
print(f("%.3d %.0d [%8.3d]", 7, 0, -7))
print(f("%x %X %o", 255, 255, 8))
print(f("%#x %#X %#o", 255, 255, 8))
print(f("%08x|%-8X|", 48879, 48879))
print(f("%x", -1), f("%X", math.mininteger))
print(f("%d %d", math.maxinteger, math.mininteger))
print(f("%d", 3.0), f("%x", 2^53))
print(pcall(f, "%d", 3.1))
print(pcall(f, "%d", "x"))
print(f("%d", "10"), f("%5s", 10))
print(f("%c%c%c", 76, 117, 97), #f("%c", 0))
print(f("%5c|%-5c|", 65, 66))
print(f("%%d is literal: %d%%", 50))
-- many arguments
print(f(("%d "):rep(20), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20))
print(pcall(f, "%d %d", 1))
print(pcall(f, "%y", 1))
print(pcall(f, "%10.123d", 1))
-- a table of formatted numbers
for _, n in ipairs({0, 1, -1, 255, 65535, 1 << 40}) do
  print(f("%12d|%12x|%-12o|", n, n, n))
end
