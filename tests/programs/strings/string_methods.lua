-- Strings share a metatable whose __index is the string table.
print(("%d items"):format(5))
local s = "method"
print(s:len(), s:upper(), s:sub(2, 3), s:rep(2), s:byte(1))
-- methods on numbers are not available: numbers have no metatable
print(pcall(function() local n = 5; return n:len() end))
-- adding a function to the string table makes it a method of all strings
function string.shout(str) return str:upper() .. "!" end
print(("hey"):shout(), s:shout())
string.shout = nil
print(pcall(function() return s:shout() end))
-- string indexing with a number returns nil (via string.__index table)
print(("abc")[1], ("abc").nonexistent)
-- getmetatable("") is shared by all strings
print(getmetatable("a") == getmetatable("b"))
-- arithmetic on strings goes through the string metamethods
local mt = getmetatable("")
print(type(mt.__add), type(mt.__unm), mt.__band)
print("10" + 5, "2" ^ "3", -"4", "9" // 2, "1.5" * 2)
-- method call chains
print(("  padded  "):gsub("^%s+", ""):gsub("%s+$", ""):upper())
print((" x "):rep(2):len())
