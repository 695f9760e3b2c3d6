-- string.pack, string.unpack, string.packsize (manual section 6.4.2): every option, both byte
-- orders, alignment, wide integers, and lua5.4's errors.
local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end
local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do
    local v = t[i]
    if math.type(v) == "float" then t[i] = string.format("%.17g", v) else t[i] = tostring(v) end
  end
  print(table.concat(t, " ", 1, t.n))
end

-- integers of every size, signed and unsigned, both orders
for _, f in ipairs{"b", "B", "h", "H", "i", "I", "l", "L", "j", "J", "T", "i1", "i3", "I5", "i7", "i8", "i9", "I12", "i16"} do
  for _, e in ipairs{"<", ">", "="} do
    local v = f:match("^[BHILJT]") and 100 or -100
    local s = string.pack(e .. f, v)
    show(e .. f, hex(s), #s, string.packsize(e .. f), string.unpack(e .. f, s))
  end
end
show(hex(string.pack(">i16", math.mininteger)), string.unpack(">i16", string.pack(">i16", math.mininteger)))
show(hex(string.pack("<I16", -1)), pcall(string.unpack, "<I16", string.pack("<I16", -1)))
show(hex(string.pack("<J", -1)), string.unpack("<J", string.pack("<J", -1)))
show(string.unpack("<i2", "\xff\x7f"), string.unpack("<I2", "\xff\xff"), string.unpack(">i3", "\x80\x00\x00"))

-- floats
for _, v in ipairs{0.0, -0.0, 1.5, -2.25, 1e300, 1/0, -1/0, 3.1415926535897931} do
  show(hex(string.pack("<d", v)), hex(string.pack(">n", v)), string.unpack("<d", string.pack("<d", v)))
  show(hex(string.pack("<f", v)), string.unpack(">f", string.pack(">f", v)))
end
show(string.unpack("d", string.pack("d", 0/0)) ~= string.unpack("d", string.pack("d", 0/0)))
show(string.pack("f", 2^200) == string.pack("f", 1/0))

-- strings
show(hex(string.pack("z", "hello")), string.unpack("z", "hello\0world\0"))
show(hex(string.pack("s1", "ab")), hex(string.pack(">s2", "abc")), hex(string.pack("s", "xy")))
show(string.unpack("s1", "\3abcdef"), string.unpack(">s2", "\0\2hi!"))
show(hex(string.pack("c5", "ab")), string.unpack("c2c3", "hello"))
show(hex(string.pack("c0", "")), string.unpack("c0", "abc"))
show(string.pack("z", ""):byte(1), #string.pack("s4", ""))

-- alignment: '!' sets the maximum, 'x' pads one byte, 'X' aligns to the next option
show(hex(string.pack("!4 b i4", 1, 2)), string.packsize("!4 b i4"), string.packsize("b i4"))
show(hex(string.pack("!8 b d", 1, 0.5)), string.packsize("!8 b d"), string.packsize("!2 b d"))
show(hex(string.pack("b x h", 1, 2)), hex(string.pack("!4 b Xi4 b", 1, 2)), string.packsize("!4 bXi4"))
show(hex(string.pack("! b j", 7, 8)), string.packsize("!bj"), string.packsize("!16 b i16"))
show(string.unpack("!4 b i4", string.pack("!4 b i4", -1, -2)))
show(hex(string.pack("<!4 i2 Xi4 i8", 1, 2)), string.packsize("i3 Xi4 i2"), string.packsize("!4 h Xi4 i2"))
show(string.packsize("c3 Xi8"), string.packsize("!8 c3 Xi8"), string.packsize("!8 c3 XI2"))

-- positions
local data = string.pack("<i4 i4 i4", 10, 20, 30)
show(string.unpack("<i4", data, 5), string.unpack("<i4", data, -4), string.unpack("<i4", data, -100))
show(string.unpack("<i4", data, 0), string.unpack("", data, #data + 1), string.unpack("<i4i4", data))
show(string.unpack("b", "\255"), string.unpack("B", "\255"), select("#", string.unpack("i4xxx", data)))

-- spaces and many values
show(string.unpack(" < i2 > i2 = i2 ", string.pack(" < i2 > i2 = i2 ", 1, 2, 3)))
local many = {}
for i = 1, 100 do many[i] = i end
local s = string.pack(string.rep("B", 100), table.unpack(many))
show(#s, select("#", string.unpack(string.rep("B", 100), s)), (select(100, string.unpack(string.rep("B", 100), s))))

-- numbers from strings and floats with integer values
show(hex(string.pack("i4", "12")), hex(string.pack("i4", 3.0)), hex(string.pack("d", "2.5")))

-- errors
local function err(f, ...) show(pcall(f, ...)) end
err(string.pack, "i17", 1)
err(string.pack, "i0", 1)
err(string.packsize, "c")
err(string.pack, "!3 i4", 1)
err(string.pack, "X", 1)
err(string.pack, "!4 i3", 1)
err(string.packsize, "!4 b Xi3")
err(string.pack, "Xc1", 1)
err(string.packsize, "Xz")
err(string.pack, "q", 1)
err(string.packsize, "s")
err(string.packsize, "z")
err(string.pack, "i2", 40000)
err(string.pack, "i2", -32769)
err(string.pack, "I2", 65536)
err(string.pack, "I1", -1)
err(string.pack, "c2", "abc")
err(string.pack, "s1", string.rep("a", 256))
err(string.pack, "z", "a\0b")
err(string.pack, "i4")
err(string.pack, "i4i4", 1)
err(string.pack, "d", "x")
err(string.pack, "i4", 1.5)
err(string.pack, "j", 2^63)
err(string.pack, 12, 1)
err(string.pack)
err(string.unpack, "i4", "abc")
err(string.unpack, "z", "abc")
err(string.unpack, "s1", "\5ab")
err(string.unpack, "i4", "abcd", 10)
err(string.unpack, "i4", "abcd", 6)
err(string.unpack, "i9", string.rep("\1", 9))
err(string.unpack, "<i9", "\0\0\0\0\0\0\0\128\0")
err(string.unpack, "<i9", "\0\0\0\0\0\0\0\128\255")
err(string.unpack, "i4", nil)
err(string.packsize, string.rep("c1000000000", 5))
err(string.packsize, "i99999999999")
