-- Differential cases for the string library (vm_lib_string.c, vm_lib_pattern.c,
-- vm_lib_strfmt.c). Its output under lua5.4 is stored in strlib_cases.expected; tandem must
-- print exactly the same. Regenerate with: lua5.4 strlib_cases.lua > strlib_cases.expected
-- Every call goes through a Lua wrapper so that "bad argument" messages name the function as
-- a call site does ('format', not 'string.format'), and the "chunk:line:" prefix of errors is
-- cut so that the output does not depend on the path the script is run from.

local function show(...)
  local n = select("#", ...)
  local t = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "string" then t[i] = "'" .. v .. "'" else t[i] = tostring(v) end
  end
  return n .. ": " .. table.concat(t, ", ")
end

local function strip(msg)
  msg = tostring(msg)
  local p = msg:find(":%d+: ")
  if p and p < 60 then msg = msg:sub((msg:find(" ", p)) + 1) end
  return msg
end

local function try(label, f, ...)
  local r = table.pack(pcall(f, ...))
  if r[1] then
    print(label, show(table.unpack(r, 2, r.n)))
  else
    print(label, "ERROR " .. strip(r[2]))
  end
end

-- wrappers: the call site names the function
local W = {
  len = function(...) return string.len(...) end,
  sub = function(...) return string.sub(...) end,
  upper = function(...) return string.upper(...) end,
  lower = function(...) return string.lower(...) end,
  rep = function(...) return string.rep(...) end,
  reverse = function(...) return string.reverse(...) end,
  byte = function(...) return string.byte(...) end,
  char = function(...) return string.char(...) end,
  format = function(...) return string.format(...) end,
  find = function(...) return string.find(...) end,
  match = function(...) return string.match(...) end,
  gsub = function(...) return string.gsub(...) end,
  gmatch = function(s, p, init)
    local out = {}
    for a, b, c in string.gmatch(s, p, init) do
      out[#out + 1] = show(a, b, c)
      if #out > 50 then break end
    end
    return table.concat(out, " | ")
  end,
}

-------------------------------------------------------------------------------
print("== basics")
local s = "Hello, World"
for _, ij in ipairs({{1, 5}, {8}, {-5}, {-5, -2}, {0}, {5, 4}, {100}, {-100, 3}, {3, -100},
                     {13}, {12, 12}, {math.mininteger, math.maxinteger}, {0, 0}, {-1, -1},
                     {2.0, 3.0}}) do
  try("sub " .. table.concat(ij, ","), W.sub, s, ij[1], ij[2])
end
try("sub no i", W.sub, s)
try("sub float", W.sub, s, 1.5)
try("sub str i", W.sub, s, "2", "3")
try("sub num s", W.sub, 12345, 2, 3)
try("len", W.len, "abc\0def")
try("len num", W.len, 1.5)
try("len nil", W.len)
try("len table", W.len, {})
try("upper", W.upper, "abc\0XyZ\200\255 123")
try("lower", W.lower, "ABC\0xYz\200\255 123")
try("reverse", W.reverse, "abc\0d")
try("reverse empty", W.reverse, "")
try("upper bool", W.upper, true)
for _, a in ipairs({{"ab", 3}, {"ab", 3, "-"}, {"x", 0}, {"x", -1}, {"x", 1, "sep"},
                    {"", 5, ","}, {"ab", 3, ""}, {"x", 3.0}, {"", 0, ""}}) do
  try("rep " .. table.concat(a, ","), W.rep, a[1], a[2], a[3])
end
try("rep float", W.rep, "x", 2.5)
try("rep huge", W.rep, "x", math.maxinteger, "x")
try("rep huge2", W.rep, "xx", math.maxinteger)
try("rep nosep", W.rep, "x")
print(#string.rep("abc", 1000, ", "))
try("byte", W.byte, "ABC")
try("byte 2", W.byte, "ABC", 2)
try("byte -1", W.byte, "ABC", -1)
try("byte 1,3", W.byte, "ABC", 1, 3)
try("byte 1,-1", W.byte, "ABC", 1, -1)
try("byte 10", W.byte, "ABC", 10)
try("byte 0", W.byte, "ABC", 0)
try("byte 3,1", W.byte, "ABC", 3, 1)
try("byte -10,10", W.byte, "ABC", -10, 10)
try("byte empty", W.byte, "")
try("byte high", W.byte, "\255\128\0")
try("byte 2.5", W.byte, "ABC", 2.5)
try("char", W.char, 72, 105, 33)
try("char none", W.char)
try("char 0", W.char, 0, 255)
try("char 256", W.char, 256)
try("char -1", W.char, 65, -1)
try("char str", W.char, "65", 66.0)
try("char bad", W.char, 65, "x")
try("char float", W.char, 65.5)
local all = {}
for i = 0, 255 do all[#all + 1] = i end
local allbytes = string.char(table.unpack(all))
print(#allbytes, allbytes:byte(1), allbytes:byte(256), allbytes:upper():byte(98), allbytes:lower():byte(66))

-------------------------------------------------------------------------------
print("== format numbers")
local values = {0, 1, -1, 42, 255, 65, 3.14159, -2.5, 0.1, 1e300, 1e-300, 123456789012,
                1/0, -1/0, math.mininteger, math.maxinteger, 2^53, 2^63, -0.0, 1e15, 1e16,
                "10", "0x10", "1e2", " 7 ", "abc", 5.0}
local specs = {"%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d", "%+.3d", "%-+8.4d|", "%i",
               "%x", "%X", "%#x", "%#X", "%08x", "%#10.4x", "%o", "%#o", "%u", "%5u",
               "%e", "%.3e", "%E", "%+.1E", "%012.3e", "%f", "%.0f", "%#.0f", "%10.4f",
               "%-10.2f|", "%+f", "% f", "%g", "%.3g", "%#g", "%G", "%.0g", "%20.10g",
               "%-12g|", "%a", "%A", "%.2a", "%+a", "%#a", "%q", "%s", "%10s", "%-10s|",
               "%.2s", "%5.1s|", "%.99f"}
for _, spec in ipairs(specs) do
  for _, v in ipairs(values) do
    try(spec .. " " .. type(v) .. " " .. tostring(v), W.format, spec, v)
  end
end
for _, v in ipairs({65, 97, 0, 256 + 66, -1}) do
  try("%c " .. v, W.format, "%c", v)
  try("%-3c| " .. v, W.format, "%-3c|", v)
  try("%3c| " .. v, W.format, "%3c|", v)
end
try("nan f", function() local x = string.format("%f", 0/0); return x == "nan" or x == "-nan" end)
try("nan q", W.format, "%q", 0/0)
try("nan s", function() local x = string.format("%5.1f", 0/0); return #x end)

print("== format strings")
local strs = {"", "a", "hello world", "a\0b", "tab\there", "nl\nx", "cr\rx", "quote\"s",
              "back\\slash", "\1\2\0031", "\0009", "\127\128\255", "\0", "1\0002",
              string.rep("x", 120), "\r\n", "é"}
for _, str in ipairs(strs) do
  try("q " .. #str, W.format, "%q", str)
  try("s " .. #str, W.format, "%s", str)
  try("10s " .. #str, W.format, "[%10s]", str)
  try("-10.3s " .. #str, W.format, "[%-10.3s]", str)
  try("5s " .. #str, W.format, "[%5s]", str)
end
local obj = setmetatable({}, {__tostring = function() return "OBJ" end})
local numobj = setmetatable({}, {__tostring = function() return 42 end})
try("s tostring", W.format, "%s|%5s|%-5s|%.1s", obj, obj, obj, obj)
try("s tostring num", W.format, "%s", numobj)
try("s nil bool", W.format, "%s %s %s", nil, true, false)
try("s numbers", W.format, "%s %s %s %s", 1, 1.0, -0.0, 1e100)
try("s int float", W.format, "%5s|%-5s|", 12, 1.5)
try("q nil bool", W.format, "%q %q %q", nil, true, false)
try("q ints", W.format, "%q %q %q %q", 0, -1, math.maxinteger, math.mininteger)
try("q floats", W.format, "%q %q %q %q %q", 1.0, 0.5, -0.0, 1e100, 2^63)
try("q inf", W.format, "%q %q", 1/0, -1/0)
try("q table", W.format, "%q", {})
try("q func", W.format, "%q", print)
try("q modifiers", W.format, "%5q", "x")
try("q modifiers2", W.format, "%-q", "x")
try("mixed", W.format, "%d %s %5.2f %%  %x|%-6s|%q", 42, "str", 3.14159, 255, "ab", "q\n")
try("percent", W.format, "100%%")
try("percent only", W.format, "%%")
try("no args", W.format, "plain text")
try("number fmt", W.format, 12)
try("extra args", W.format, "%d", 1, 2, 3)

print("== format errors")
local bad = {"%y", "%", "abc%", "%5", "%5.", "%.", "%-", "%100d", "%10.100d", "%#d", "% x",
             "%+u", "%05s", "%#s", "%.200s", "%0123d", "%123", "%1.1.1d", "%..d", "%5.1c",
             "%+c", "%#c", "%F", "%b", "%n", "%hd", "%ld", "%lld", "%z", "% q", "%5.2%",
             "%" .. string.rep("-", 20) .. "d", "%" .. string.rep("-", 21) .. "d",
             "%" .. string.rep("1", 20) .. "d", "%" .. string.rep("1", 21) .. "d",
             "%#5.100f", "%#5.100a", "%#5.100s", "%#5.100p", "%5.1p", "%-+ #0d", "%-+ 0d",
             "%-0x", "%-#0x", "%+#x", "%+-0 #f", "%99.99f", "%#99.99e", "%s\0%d"}
for _, spec in ipairs(bad) do
  try("bad " .. spec, W.format, spec, 1)
end
try("no value", W.format, "%d")
try("no value2", W.format, "%d %d", 1)
try("no value y", W.format, "%y")
try("no value long", W.format, "%" .. string.rep("-", 25) .. "d")
try("no fmt", W.format)
try("fmt table", W.format, {})
try("d float", W.format, "%d", 1.5)
try("d str float", W.format, "%d", "1.5")
try("d nil", W.format, "%d", nil)
try("d table", W.format, "%d", {})
try("d bigfloat", W.format, "%d", 2^63)
try("x float ok", W.format, "%x", 16.0)
try("f str", W.format, "%f", "x")
try("f table", W.format, "%f", {})
try("c table", W.format, "%c", {})
try("a str", W.format, "%a", "x")
try("s zeros", W.format, "%5s", "a\0b")
try("s zeros plain", W.format, "%s", "a\0b")
try("arg index", W.format, "%d %d %s", 1, 2)
try("arg index2", W.format, "%d %d %d", 1, 2, "x")
try("p nil", W.format, "%p", nil)
try("p num", W.format, "%p|%5p|%-7p|", 1, true, 2.5)
try("p same", function() local t = {} return string.format("%p", t) == string.format("%p", t) end)
try("p differ", function() return string.format("%p", {}) ~= string.format("%p", {}) end)
try("tostring err", W.format, "%s", setmetatable({}, {__tostring = function() return {} end}))
do
  local big = string.format("%99.99f", 1e308)
  print(#big, big:sub(1, 20), big:sub(-5))
  local long = string.format("%s|%s", string.rep("a", 300), string.rep("b", 300))
  print(#long, long:sub(299, 303))
  local many = string.format(string.rep("%d,", 100), table.unpack(all, 1, 100))
  print(#many, many:sub(-10))
end

-------------------------------------------------------------------------------
print("== find")
local text = "the quick brown fox jumps over the lazy dog"
local finds = {
  {text, "quick"}, {text, "the", 2}, {text, "the", -8}, {text, "cat"}, {text, "o", 1, true},
  {text, "o", 15, true}, {text, ""}, {text, "", 10}, {text, "", #text + 1},
  {text, "", #text + 2}, {text, "(%a+) (%a+)$"}, {text, "%s"}, {text, "%s", -4},
  {"a.b.c", ".", 1, true}, {"a.b.c", "%."}, {"a.b.c", "."}, {"a+b", "+", 1, true},
  {"x*y", "*", 1, true}, {"[x]", "[", 1, true}, {"hello", "l+"}, {"hello", "xyz", 1, true},
  {"aaa", "a", -10}, {"abc", "b", 100}, {"hello", "^h"}, {"hello", "^e"}, {"hello", "o$"},
  {"hello", "^hello$"}, {"100%", "%", 1, true}, {"a^b", "^b", 1, true}, {"a$", "$", 1, true},
  {"abc", "b", -1}, {"abc", "", 10}, {"abc", "", 4}, {"abc", "", 3}, {"", ""}, {"", "", 1},
  {"", "", 2}, {"", "a"}, {"abc", "abc", 1, true}, {"abc", "abcd", 1, true},
  {"abcabc", "cab", 1, 1}, {"a\0b\0c", "\0c"}, {"a\0b\0c", "%z"}, {"a\0b", "[\0]"},
  {"abc", "b", 0}, {"abc", "b", math.mininteger}, {"abc", "b", math.maxinteger},
  {"abc", "[b-]"}, {"abc", "^"}, {"abc", "^", 2}, {"abc", "$"}, {"abc", "c$", 3},
  {"x^y", "x^y"}, {"a$b", "a$b"}, {"a$b", "$b"}, {"hello world", "o w", 1, false},
  {"hello world", "(o)( )(w)"}, {"hello", "()ll()"}, {12345, 34}, {12345, "3(4)"},
  {"aXb", "%u"}, {"f(a,b)", "%b()"}, {"a.b", "a.b", 1, nil},
}
for i, c in ipairs(finds) do
  try("find " .. i, W.find, c[1], c[2], c[3], c[4])
  try("match " .. i, W.match, c[1], c[2], c[3])
end

print("== patterns")
local subjects = {"", "a", "hello world", "  padded  ", "key = value", "2024-01-15",
                  "THE (quick) [brown] {fox}", "a,b,,c", "x = 1, y = 22, z = 333",
                  "f(a(b)c)d)", "\0\1\2 abc\n\t", "THE END", "aaa", "ababab", "été",
                  "one two  three", "a.b-c+d*e?f", "[[nested]]", "%d%s", "1.5e10 -3 +4.25"}
local patterns = {".", "%a+", "%A+", "%d+", "%D", "%l+", "%u+", "%s+", "%S+", "%w+", "%W",
                  "%x+", "%X+", "%p", "%P+", "%c", "%C+", "%g+", "%G", "%z", "a*", "a+", "a-",
                  "a?", "a-b", "^a", "a$", "^$", "(a)(b)", "(a*(.)%w(%s*))", "()a()", "%b()",
                  "%b[]", "%b{}", "%f[%w]%w+", "%f[%W]", "%f[%l]", "%f[%a]%a+%f[%A]",
                  "[%w_]+", "[^%s]+", "[a-c]+", "[^a-c]+", "[%a-]", "[a%-z]", "[]]",
                  "[^]]", "[a-]", "[-a]", "[%]]", "[%%]", "[.]", "(%w+)%s*=%s*(%w+)",
                  "(%d+)-(%d+)-(%d+)", "(a)%1", "(ab)%1", "(.)%1", "%((%w+)%)",
                  "[%[%]]", "%.", "%%d", ".-", ".*", "(.-)%s", "(h)(e)(l)(l)(o)", "^(%s*)(.-)(%s*)$",
                  "[+-]?%d+%.?%d*", "[%d.]+[eE]?[+-]?%d*", "(()a())", "[^%z]+", "%s*$",
                  "^%s*", "x*$", "%w-,", ",", ",,", "[,]+", "(%w*)", "[\0-\2]+", "\0",
                  "%1", "(", ")", "%", "[a", "[a%", "[]", "%b", "%ba", "%f", "%fa",
                  "(()", "%g-%s", "[%a%d]+", "[^%a%d%s]+", "[A-Z][a-z]*", "é", "[é]+"}
for si, subj in ipairs(subjects) do
  for pi, pat in ipairs(patterns) do
    local label = si .. "/" .. pi
    try("f" .. label, W.find, subj, pat)
    try("m" .. label, W.match, subj, pat)
    try("gm" .. label, W.gmatch, subj, pat)
    try("gs" .. label, W.gsub, subj, pat, "<%0>")
  end
end

print("== gmatch")
local function each(it, sep)
  local out = {}
  for a, b in it do out[#out + 1] = b ~= nil and (a .. "->" .. b) or ("[" .. a .. "]") end
  print(table.concat(out, sep or ""))
end
each(("abc"):gmatch("", 4))
each(("abc"):gmatch("", 5))
each(("a^bc"):gmatch("^."))
each(("abc"):gmatch(".", -2))
each(("abc"):gmatch(".", -10))
each(("abc"):gmatch(".", 0))
each(("a=1, b=2, c=3"):gmatch("(%w+)=(%w+)"), ";")
each(("abc"):gmatch("()"), ";")
each(("one two three"):gmatch("%a*"))
do
  local it = ("x y"):gmatch("%a")
  print(it(), it(), it(), it())
  local it2 = string.gmatch("aaa", "a")
  local n = 0
  for _ in it2 do n = n + 1 end
  print(n, it2())
end
try("gmatch bad", function() for k in ("abc"):gmatch("(a") do end end)
try("gmatch nopat", W.gmatch, "abc")
try("gmatch malformed", W.gmatch, "abc", "[a")

print("== gsub")
local gs = {
  {"hello world", "o", "0"}, {"hello world", "o", "0", 1}, {"hello world", "o", "0", 0},
  {"hello world", "o", "0", -1}, {"hello world", "o", "0", 2.0}, {"hello", "", "-"},
  {"hello", "x*", "-"}, {"abc", "^.", "x"}, {"abc", "$", "!"}, {"abc", "^", ">"},
  {"abc", ".", "%0%0"}, {"abc", "(.)", "%1%%"}, {"hello world", "(%w+)", "<%1>"},
  {"hello world", "(%w+) (%w+)", "%2 %1"}, {"abc", "a", "%1"}, {"abc", "(a)", "%2"},
  {"abc", "a", "%x"}, {"abc", "a", "%"}, {"abc", "a", "x%"}, {"hello world", "()o()", "%1-%2"},
  {"abc", "b", 5}, {"abc", "b", 1.5}, {"abc", 98, "x"}, {123, 2, 9}, {"a.b.c", "%.", "%%"},
  {"abc", "%w", "%0%0", 2}, {"abc", "%w", "%0%0", 2.5}, {"abc", "%w"}, {"abc", "%w", true},
  {"abc", "%w", nil}, {"a\0b", "%z", "Z"}, {"a\0b", "\0", "%%0"},
  {"  padded  ", "^%s+", ""}, {"  padded  ", "%s+$", ""}, {"x", "x", "\0"},
  {"abc", "(a)(b)(c)", "%3%2%1%0"}, {"abc", "b*", "-"}, {"abc", "b-", "-"},
}
for i, c in ipairs(gs) do
  try("gsub " .. i, W.gsub, c[1], c[2], c[3], c[4])
end
try("gsub table", W.gsub, "$name is $age", "%$(%w+)", {name = "Bob", age = 42})
try("gsub table float", W.gsub, "abc", ".", {a = 1, b = 2.5})
try("gsub table false", W.gsub, "abc", ".", {a = false, b = "B"})
try("gsub table bool", W.gsub, "abc", ".", {a = true})
try("gsub table table", W.gsub, "abc", ".", {b = {}})
try("gsub table pos", W.gsub, "abc", "()", {[1] = "one", [4] = "four"})
try("gsub table meta", W.gsub, "abc", "%w",
    setmetatable({}, {__index = function(_, k) return k:upper() end}))
try("gsub func", W.gsub, "hello world", "%w+", function(w) return w:upper() end)
try("gsub func caps", W.gsub, "a=1 b=2", "(%w)=(%w)", function(k, v) return v .. k end)
try("gsub func nil", W.gsub, "abc", "%w", function(c) if c == "b" then return "B" end end)
try("gsub func false", W.gsub, "abc", "%w", function() return false end)
try("gsub func num", W.gsub, "abc", "%w", function(c) return c:byte() end)
try("gsub func float", W.gsub, "abc", "%w", function() return 0.5 end)
try("gsub func table", W.gsub, "abc", "%w", function() return {} end)
try("gsub func multi", W.gsub, "abc", "%w", function(c) return c, "ignored" end)
try("gsub func pos", W.gsub, "abc", "()(.)", function(p, c) return p .. c end)
try("gsub func error", W.gsub, "abc", "%w", function() error("boom") end)
try("gsub func error tbl", function() local ok, e = pcall(string.gsub, "abc", "%w", function() error({}) end) return ok, type(e) end)
do
  -- the callback may run gsub itself and allocate a lot
  local r, n = ("abc"):gsub(".", function(c)
    local inner = string.rep(c, 100):gsub(c, function(x) return x:upper() end)
    return #inner .. c
  end)
  print(r, n)
  -- the callback sees each match in order
  local seen = {}
  ("a1b2c3"):gsub("%d", function(d) seen[#seen + 1] = d end)
  print(table.concat(seen, ","))
  local count = select(2, string.gsub(string.rep("ab", 1000), "b", "c"))
  print(count)
  local long = string.rep("x", 5000):gsub("x", "yz")
  print(#long)
end

print("== limits")
try("too many captures", W.find, "abc", string.rep("(a)", 33))
try("32 captures", function() return select("#", string.rep("a", 32):match(string.rep("(a)", 32))) end)
try("32 pos captures", function() return select("#", ("a"):match(string.rep("()", 32))) end)
try("33 pos captures", function() return select("#", ("a"):match(string.rep("()", 33))) end)
for _, n in ipairs({100, 198, 199, 200, 300}) do
  try("complex ? " .. n, W.find, string.rep("a", 300), string.rep("a?", n))
  try("complex () " .. n, W.find, string.rep("a", 300), string.rep("(a)", math.min(n, 32)))
end
try("complex *", W.find, string.rep("a", 300), string.rep("a*", 250))
try("complex -", W.find, string.rep("a", 300), string.rep("a-", 199) .. "$")
try("complex - 2", W.find, string.rep("a", 300), string.rep("a-", 200) .. "$")
try("long run", W.find, string.rep("a", 100000) .. "b", "a*b")
try("long lazy", W.find, string.rep("a", 100000) .. "b", "a-b")
try("long match", function() return #string.rep("ab", 50000):match("^(.*)$") end)
try("balance deep", W.find, string.rep("(", 1000) .. string.rep(")", 1000), "%b()")
try("backtrack", W.find, string.rep("a", 12), string.rep("a*", 4) .. "b")

print("== methods and metatable")
print(("%d items"):format(5), ("x"):rep(3), ("abc"):upper(), ("Hi"):byte(1, -1))
print(getmetatable("").__index == string, getmetatable("a") == getmetatable("b"))
print(type(getmetatable("").__add), getmetatable("").__band, getmetatable("").__concat)
print(("abc").nofield, ("abc")[1])
print("10" + 1, "0x10" * "2", " 3 " ^ 2, -"2", -"2.0", "7" // "2", "7.0" // "2",
      "7" % "-3", "2" / "1", "3" - 1.5, "5" % 0.0 ~= "5" % 0.0)
try("arith bad", function() return "abc" + 1 end)
try("arith bad2", function() return 1 + "abc" end)
try("arith unm", function() return -"abc" end)
try("arith table", function() return "1" + {} end)
try("arith mm", function()
  return "a" + setmetatable({}, {__add = function() return "mm" end})
end)
-- the metamethods called directly (the interpreter may convert numeric strings itself)
local smt = getmetatable("")
try("idiv zero", smt.__idiv, "1", "0")
try("mod zero", smt.__mod, "1", "0")
try("idiv zero float", smt.__idiv, "1", "0.0")
try("mm direct", function()
  return smt.__add("1", "2"), smt.__sub("1", 2.5), smt.__mul("3", "4"), smt.__div("3", "4"),
         smt.__pow("2", "10"), smt.__mod("-7", "3"), smt.__mod("7.5", "2"), smt.__idiv("-7", "2"),
         smt.__unm("3", "3"), smt.__unm("0x10", "0x10"), smt.__add("9223372036854775807", "1")
end)
try("mm direct bad", smt.__add, "x", "1")
try("mm direct bad2", smt.__sub, {}, "1")
try("mm direct defer", smt.__add, "x", setmetatable({}, {__add = function(a, b) return "deferred" end}))
print("== done")
