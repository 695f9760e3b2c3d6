-- string.gsub with string, table and function replacements.
print(("hello world"):gsub("o", "0"))
print(("hello world"):gsub("o", "0", 1))
print(("hello world"):gsub("o", "0", 0))
print(("hello"):gsub("", "-"))
print(("hello world"):gsub("(%w+)", "<%1>"))
print(("hello world"):gsub("%w+", "%0 %0"))
print(("abc"):gsub("%w", "%%"))
print(("x = 1"):gsub("(%w+) = (%w+)", "%2 = %1"))
print(pcall(string.gsub, "abc", "(b)", "%2"))
print(pcall(string.gsub, "abc", "b", "%z"))
-- table replacement: missing keys and false keep the match
local vars = {name = "tandem", version = 5, off = false}
print(("$name v$version $missing $off"):gsub("%$(%w+)", vars))
-- function replacement: nil/false keep the match, numbers are converted
print(("1 2 3 4"):gsub("%d", function(d) return tonumber(d) % 2 == 0 and d * 10 or nil end))
print(("abc"):gsub(".", function(c) return c:byte() end))
print(pcall(string.gsub, "abc", ".", function() return {} end))
-- captures passed to the function
print(("k1=v1;k2=v2"):gsub("(%w+)=(%w+)", function(k, v) return v .. "=" .. k end))
-- position capture passed to the replacement
print(("abc"):gsub("()", "%1"))
-- anchored gsub replaces at most once
print(("aaa"):gsub("^a", "b"))
-- special characters in replacement strings
print(("path/to/file"):gsub("/", "%%2F"))
print(("a.b"):gsub("%.", "%%"))
-- counting with gsub
local _, spaces = ("a b c d"):gsub(" ", " ")
print("spaces", spaces)
-- escaping magic characters
local function escape(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end
print(escape("1+1=2? (yes) [100%]"))
print(("price: 1+1"):gsub(escape("1+1"), "two"))
-- max replacements given as float
print(("aaaa"):gsub("a", "b", 2.0))
-- large text
local big = ("word "):rep(1000)
local replaced, count = big:gsub("word", "w")
print(#replaced, count)
