-- The pattern matcher's fast paths (vm/lib/vm_lib_pattern.c), each with a case where its
-- condition holds and one where it fails, compared with lua5.4: classes as 256-bit sets,
-- the start-position scan (memchr, set scan, leading captures), max_expand/min_expand
-- skipping attempts (end, '$', a class after the repetition), errors raised only when the
-- matcher reaches them, the recursion limit at its exact boundary, programs too long for
-- the C stack, gmatch's translated pattern, gsub's unchanged result, match's plain search.

local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  return table.concat(t, " ")
end
local function try(f, ...) return show(pcall(f, ...)) end

-- every class and its complement on every byte, as a bit string of 256 characters
-- (compressed to hex)
local function bits(pat)
  local out, acc = {}, 0
  for c = 0, 255 do
    if string.find(string.char(c), pat) then acc = acc | (1 << (c % 4)) end
    if c % 4 == 3 then out[#out + 1] = string.format("%x", acc); acc = 0 end
  end
  return table.concat(out)
end
for _, k in ipairs({"a", "c", "d", "g", "l", "p", "s", "u", "w", "x", "z", "q", "y", "b2"}) do
  if #k == 1 then
    print("%" .. k, bits("^%" .. k .. "$"))
    print("%" .. k:upper(), bits("^%" .. k:upper() .. "$"))
    print("[%" .. k .. "]", bits("^[%" .. k .. "]$"))
    print("[^%" .. k .. "]", bits("^[^%" .. k .. "]$"))
  end
end
-- sets: ranges (empty, high bytes), escapes inside, ']' first, '-' at the ends
for _, set in ipairs({"[a-f]", "[f-a]", "[%a-z]", "[a-]", "[-a]", "[]]", "[^]]", "[]a]",
                      "[%]]", "[%%]", "[\128-\255]", "[^\0-\127]", "[^%d%s]", "[%w_.]",
                      "[a-cx-z0]", "[%z]", "[^%Z]", "[.]", "[%.]", "[a%-z]", "[%^]",
                      "[^^]", "[+-/]"}) do
  print(string.format("%q", set), bits("^" .. set .. "$"))
end
print(".", bits("^.$"), "%.", bits("^%.$"), "%%", bits("^%%$"), "x", bits("^x$"))

-- start scan: literal first item (memchr), set first item, leading captures, and the
-- cases where it cannot apply (first item optional, '.', '^' anchor, too many leading '(')
local s = "the year 2024, day 17: 3 items at 42.50 each"
print(s:find("%d+"), s:find("y"), s:find("z"), s:find("(%d+)"), s:find("((%d)(%d))"))
print(s:find("()(%d+)()"), s:find("%d*"), s:find("x?e"), s:find(".a"), s:find("^t%a+"))
print(s:find("(((((((((((((((((%d)))))))))))))))))"))
print(s:find("(((((((((((((((((((((%d)))))))))))))))))))))"))
print(s:match("(%a+):"), s:match("%d+%.%d+"), s:match("[%d.]+$"), s:match("q"))
print(("xyz"):find("a+"), ("xyz"):find("z+"), ("xyz"):find("z", 4), (""):find("a"))
print(try(string.find, "xyz", ("("):rep(33) .. "a" .. (")"):rep(33)))
print(try(string.find, "xyz", ("("):rep(17) .. "a" .. (")"):rep(17)))

-- max_expand: rest = end, '$', a literal, a set, something else; min_expand likewise
local t = "aaab aab ab b 123abc"
print(t:find("a*"), t:find("a+$"), t:find("a*b"), t:find("%a*%d"), t:find("a+()b"))
print(t:find("a*(b)"), t:find("%d+%a+$"), t:find("a-b"), t:find("a-$"), t:find("%d-c"))
print(t:match("(a-)(b)"), t:match("(.-)%d"), t:match("(.*)%s"), t:match("(.*)$"))
print(t:match("%s(%a-)%s"), t:match("(a+)b?"), t:match("b?(%d)"), ("aaa"):match("a-"))
print(("aaa"):match("^(a-)$"), ("aaa"):match("a*a*a*a"), ("abc"):match(".-$"))

-- '?', backreferences, balance, frontier at both ends and with '\0'
print(("x = 'a' .. \"b\""):match("([\"'])(.-)%1"), ("aXa"):find("(%a)X%1"), ("ab"):find("(a)%1"))
print(("f(a(b)c)d"):match("%b()"), ("f(a(b c"):match("%b()"), ("<>"):find("%b<>$"))
print(("hello world"):find("%f[%w]%w+$"), ("a\0b"):find("%f[%z]"), ("a\0b"):find("%f[%Z]", 2))
print(("THE END"):gsub("%f[%a]", "|"), ("x"):find("%f[x]x?%f[^x]"))
print(("colour color"):gsub("colou?r", "C"), ("aaa"):match("^a?a?a?a?$"))

-- errors raised only when reached: never reached, reached, reached later in the subject
print(try(string.find, "abc", "x["), try(string.find, "xbc", "x["))
print(try(string.find, "abc", "x%"), try(string.find, "xbc", "x%"))
print(try(string.find, "abc", "x%b"), try(string.find, "xbc", "x%bx"))
print(try(string.find, "abc", "x%fa"), try(string.find, "xbc", "x%fa"), try(string.find, "x", "x%f"))
print(try(string.find, "abc", "c[a"), try(string.match, "abc", "b%"))
print(try(string.gsub, "aaa", "b[", "x"), try(string.gsub, "aab", "b[", "x"))
print(try(string.find, "abc", "a%2"), try(string.find, "abc", "(a)%2"), try(string.find, "abc", "(a%1)"))
print(try(string.find, "abc", "%0"), try(string.find, "abc", "b)"), try(string.find, "abc", "z)"))
print(try(string.match, "abc", "(b"), try(string.find, "abc", "(b"), try(string.match, "abc", "(z"))

-- the recursion limit: each quantifier that matched recurses once; at the boundary the
-- skipping paths (rest = end, '$', a literal, a set) must raise exactly where lua5.4 does
-- (the subjects let every attempt succeed or fail after little backtracking)
local ab = ("ab"):rep(260)
for _, k in ipairs({198, 199, 200, 201}) do
  local alt = ("a*b*"):rep(k // 2) .. (k % 2 == 1 and "a*" or "")   -- k items, each matching once
  local sub = ab:sub(1, k)
  print(k, try(string.find, ab, alt), try(string.find, sub, alt .. "$"),
    try(string.find, sub .. "c", alt .. "c"), try(string.find, sub .. "c", alt .. "[c]"),
    try(string.find, sub .. "c", alt .. "(c)"), try(string.find, sub .. "c", alt .. "c?"))
  print(k, try(string.find, ab, ("a*b"):rep(k)), try(string.find, ab, ("a+b"):rep(k)),
    try(string.find, ab, ("a-b"):rep(k)), try(string.find, ab, ("a-"):rep(k)),
    try(string.find, ab, ("a?b"):rep(k)), try(string.find, ab, ("[a]-[b]"):rep(k)))
end
local subject = ("a"):rep(300)
print(try(string.find, subject, ("(a)"):rep(33)), try(string.find, subject, ("(a)"):rep(32)))

-- long patterns: items and sets beyond what the C stack holds
local long = ("%d"):rep(30)
local digits = ("0123456789"):rep(4)
print(digits:find(long), digits:match("(" .. long .. ")"), ("x"):rep(60):find(("x"):rep(55)))
print(digits:find(("[0-9]"):rep(12) .. "$"), digits:gsub(("%d"):rep(20), "<%0>"))
for m in digits:gmatch(("[%d]"):rep(15)) do io.write(m, ";") end print()

-- gmatch: translated once, init, '^' is a literal, empty matches, captures, lazy errors
local g = "k1=v1, k2=v2,k3 = v3"
for k, v in g:gmatch("(%w+)%s*=%s*(%w+)") do io.write(k, ":", v, " ") end print()
for p, w in g:gmatch("()(%a%d)") do io.write(p, w, " ") end print()
for w in g:gmatch("%d*") do io.write("[", w, "]") end print()
for w in ("^a^b"):gmatch("^%a") do io.write(w, " ") end print()
for w in g:gmatch("%a%d", 10) do io.write(w, " ") end print()
for w in g:gmatch("%a%d", -3) do io.write(w, " ") end print()
for w in g:gmatch("z+") do io.write(w, " ") end print("none")
print(try(function() for _ in ("abc"):gmatch("x[") do end return "ok" end))
print(try(function() for _ in ("abx"):gmatch("x[") do end return "ok" end))
local it = ("a1b2"):gmatch("%a(%d)")
print(it(), it(), it(), it())

-- gsub: scan copying spans, anchored, max_n, empty matches, unchanged subject
local text = "one two  three"
print(text:gsub("%a+", string.upper), text:gsub("%a+", "<%0>", 2), text:gsub("^%a+", "X"))
print(text:gsub("^x", "X"), text:gsub("x*", "-"), text:gsub("e", "E", 0), text:gsub("%s+", " "))
print(text:gsub("%a+", function() end), text:gsub("%a+", {one = 1}), text:gsub("%a+", {}))
print(text:gsub("(o)()", "%2"), text:gsub("o", "%%"), text:gsub("", "."), ("abc"):gsub(".", {a = false}))
print(try(string.gsub, "abc", "b", "%"), try(string.gsub, "abc", "b", "%x"), try(string.gsub, "abc", "(b)", "%2"))
print(try(string.gsub, "abc", "%w", function() return {} end))
print(("a,b,,c"):gsub(",", ";"), ("a.b"):gsub("%.", "%%"), ("abc"):gsub("b*", "-"))

-- match and find without specials: plain search (match returns the pattern itself), but
-- not with ')' (the matcher's "invalid pattern capture") nor ']' alone
print(("hello"):match("ll"), ("hello"):match("lo", 5), ("hello"):match(""), ("hello"):match("", 10))
print(("a]b"):match("]"), ("a]b"):find("]"), try(string.match, "a)b", ")"), ("a)b"):find(")"))
print(("a\0b"):match("\0b"), ("a\0b"):find("\0"), ("abc"):match("bd"))

-- subjects with every byte
local all = {}
for c = 0, 255 do all[#all + 1] = string.char(c) end
all = table.concat(all)
print(all:find("%p+"), all:find("[\200-\210]+"), all:find("%f[%w]%w+"), #all:gsub("%W", ""))
print(all:find("[^%c]+"), all:match("%u+"), all:find("\255$"), all:find("%z"))

-- the frontier scan: at the subject's start ('\0' before it), in the middle, at the end
-- (a set holding '\0'), and sets holding '\0' at the start
print(("abc def"):find("%f[%a]"), ("abc def"):find("%f[%a]", 2), ("abc def"):find("%f[%A]", 4))
print(("abc"):find("%f[%z]"), ("abc"):find("%f[%Z]"), ("abc"):find("%f[^%a]"), ("\0abc"):find("%f[%Z]"))
print(("ab\0"):find("%f[%z]"), ("ab"):find("%f[%z]", 3), (""):find("%f[%z]"), (""):find("%f[%Z]"))
print(("one two"):gsub("%f[%w]%w+", "<%0>"), ("one two"):gsub("%f[%W]", "|"), ("a"):gsub("%f[%z]", "$"))
print(("x1 y2"):gsub("(%f[%a])(%a)", "%2"), ("x1 y2"):gsub("()%f[%d]", "%1"))
for w in ("the cat, the hat"):gmatch("%f[%a]%a+") do io.write(w, ".") end print()

-- the guard after captures (max_expand/min_expand): a class after ')' or '(' decides, but
-- the first attempt goes in full so that capture errors and the depth limit stay lua5.4's
print(("ab cd,ef gh"):gsub("(%a+) (%a+)", "%2 %1"), ("key12=100 key3=7"):find("(key%d+)=1%d%d"))
print(("aaa b"):match("(a*)() (b)"), ("aaa b"):match("(a-)() (b)"), ("x=1"):match("(%w*)()(=)"))
print(try(string.find, "aaa b", "a*) b"), try(string.find, "aaa b", "a-) b"), try(string.find, "b", "a*)b"))
print(try(string.find, "aaab", "(a*)" .. ("()"):rep(32) .. "b"), try(string.find, "aaab", "(a-)" .. ("()"):rep(31) .. "b"))
print(("aaab"):match("(a*)(a)b"), ("aaab"):match("(a-)(a)b"), ("abcabc"):match("(.*)(c)"))
print(("abcabc"):match("(.-)()(c)"), ("x  y"):match("(%s*)(y)"), ("xy"):match("x(%a*)()(y)"))
for _, m in ipairs({96, 97, 98, 99, 100}) do
  local subject = ("ab"):rep(m + 1)
  print(m, try(string.find, subject, ("a*b*"):rep(m) .. "(a*)b"),
    try(string.find, subject, ("a*b*"):rep(m) .. "(a-)b"),
    try(string.find, subject .. "c", ("a*b*"):rep(m) .. "(a*)(b)c"))
end

-- string.format's plain "%d" (no snprintf) and its neighbours that still use it
print(string.format("%d|%d|%d|%d|%d|%i", 0, -7, math.mininteger, math.maxinteger, 3.0, 42))
print(string.format("%5d|%-3d|%03d|%+d|%x", 7, 7, 7, 7, 255), try(string.format, "%d", 3.5))
print(try(string.format, "%d", "12"), try(string.format, "%d", "x"), try(string.format, "%d"))
-- short results reused: equal strings from different calls stay equal and usable as keys
local keys = {}
for w in ("a bb a ccc bb a"):gmatch("%a+") do keys[w:upper()] = (keys[w:upper()] or 0) + 1 end
print(keys.A, keys.BB, keys.CCC, ("abc"):sub(1, 3) == "abc", ("abc"):rep(1), ("x"):rep(50) == ("x"):rep(50))
print(string.char(104, 105), ("olleh"):reverse(), ("MiXeD"):lower(), ("MiXeD"):upper(), #("ab"):rep(30, ","))
