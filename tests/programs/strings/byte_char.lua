-- string.byte and string.char.
print(("ABC"):byte(), ("ABC"):byte(2), ("ABC"):byte(-1), ("ABC"):byte(1, 3))
print(("ABC"):byte(10), ("ABC"):byte(0), ("ABC"):byte(3, 1))
print(select("#", ("ABC"):byte(1, -1)), select("#", (""):byte()))
print(string.char(72, 105, 33), string.char(), #string.char(0, 255))
print(pcall(string.char, 256))
print(pcall(string.char, -1))
-- round trip every byte value
local bytes = {}
for i = 0, 255 do bytes[#bytes + 1] = i end
local s = string.char(table.unpack(bytes))
local same = true
for i = 1, 256 do if s:byte(i) ~= i - 1 then same = false end end
print(#s, same)
-- a simple Caesar cipher
local function caesar(text, shift)
  return (text:gsub("%a", function(c)
    local base = c:match("%l") and 97 or 65
    return string.char((c:byte() - base + shift) % 26 + base)
  end))
end
local enc = caesar("Hello, World!", 3)
print(enc, caesar(enc, -3))
-- checksum of bytes
local sum = 0
for i = 1, #enc do sum = (sum * 31 + enc:byte(i)) % 1000000007 end
print(sum)
