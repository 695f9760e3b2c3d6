-- The concatenation operator: chains, numbers, right associativity.
local parts = {}
local s = ""
for i = 1, 10 do s = s .. i .. "," end
print(s)
print("a" .. "b" .. "c" .. "d" .. "e" .. "f" .. "g" .. "h")
print(1 .. "")
print(1.0 .. "|" .. -0.0 .. "|" .. 1e100 .. "|" .. 2^63 .. "|" .. math.mininteger)
local x, y = "left", "right"
print(x .. " and " .. y)
print(#("x"):rep(1000) .. "")
-- long chain built in one expression
local long = "0" .. "1" .. "2" .. "3" .. "4" .. "5" .. "6" .. "7" .. "8" .. "9" ..
  "a" .. "b" .. "c" .. "d" .. "e" .. "f" .. "g" .. "h" .. "i" .. "j" ..
  "k" .. "l" .. "m" .. "n" .. "o" .. "p" .. "q" .. "r" .. "s" .. "t"
print(long, #long)
print(pcall(function() return "a" .. nil end))
print(pcall(function() return "a" .. true end))
print(pcall(function() local t = {} return t .. "" end))
-- concatenation with embedded zeros
local z = "a\0" .. "\0b"
print(#z, z:byte(1, -1))
