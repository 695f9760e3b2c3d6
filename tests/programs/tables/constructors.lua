-- Table constructors: positional, keyed, computed keys, trailing calls.
local function f() return "f1", "f2", "f3" end
local t = {1, 2, [10] = 3, x = 4; f()}
-- (#t is not printed: both 5 and 10 are borders of t)
print(t[1], t[2], t[3], t[4], t[5], t[10], t.x, t[6])
local u = {f(), f()}
print(#u, u[1], u[2], u[4])
local v = {(f())}
print(#v)
-- explicit keys are overridden by positional ones in the same constructor
local w = {[1] = "explicit", "positional"}
print(w[1])
-- mixed separators and trailing separator
local m = {1; 2, 3,}
print(#m)
-- keys of every type
local key = {}
local fn = print
local all = {[1.5] = "float", [true] = "bool", [key] = "table", [fn] = "func", ["s"] = "string", [-1] = "neg"}
print(all[1.5], all[true], all[key], all[fn], all.s, all[-1])
-- nested constructors
local nested = {a = {b = {c = {1, 2, {3}}}}}
print(nested.a.b.c[3][1], #nested.a.b.c)
-- expressions as values and keys
local i = 3
local e = {[i * 2] = i, [i .. ""] = "str" .. i, i + 1}
print(e[6], e["3"], e[1])
-- a constructor with many items (exceeds one SETLIST batch)
local big = {
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
  21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
  41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
}
local s = 0
for _, x in ipairs(big) do s = s + x end
print(#big, s)
-- nil values in the constructor
local holes = {nil, nil, 3}
print(holes[3], select("#", table.unpack(holes, 1, 3)))
local emptyf = {(function() end)()}
print(#emptyf, next(emptyf))
