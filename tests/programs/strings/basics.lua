-- Basic string functions: len, sub, upper, lower, reverse, rep.
local s = "Hello, World"
print(#s, s:len(), string.len(s))
print(s:sub(1, 5), s:sub(8), s:sub(-5), s:sub(-5, -2), s:sub(0), s:sub(5, 4))
print(s:sub(100), s:sub(-100, 3), s:sub(3, -100), "[" .. s:sub(13) .. "]")
print(s:sub(math.mininteger, math.maxinteger))
print(s:upper(), s:lower(), s:reverse())
print(("ab"):rep(3), ("ab"):rep(3, "-"), ("x"):rep(0), ("x"):rep(-1), ("x"):rep(1, "sep"))
print(#("abc"):rep(1000, ", "))
print((""):reverse(), (""):upper(), ("\0a\0"):reverse():byte(1, -1))
-- strings are immutable values compared by content
local a = "con" .. "cat"
local b = "concat"
print(a == b, rawequal(a, b))
-- long strings built by repetition and hashing them as table keys
local t = {}
t[("k"):rep(100)] = 1
print(t["k" .. ("k"):rep(99)])
-- upper/lower do not touch non-ASCII bytes or digits
print(("äÖ123abcXYZ"):upper(), ("ÄÖ123ABCxyz"):lower())
-- string.len counts bytes
print(#"€", ("€"):len(), #"\u{10FFFF}")
-- tostring / concatenation of booleans and nil need tostring
print(tostring(nil) .. "|" .. tostring(true) .. "|" .. tostring(false))
