-- Float keys with integer values are the same keys as the integers.
local t = {}
t[1.0] = "a"
t[2] = "b"
print(t[1], t[2.0], #t)
t[2^53] = "big"
print(t[2^53 | 0], math.type(next({[3.0] = 1})))
-- -0.0 and 0 are the same key
t[0] = "zero"
print(t[-0.0], t[0.0])
-- non-integral floats are distinct keys
t[1.5] = "one and a half"
print(t[1.5], t[1], t[2])
-- strings that look like numbers are not numbers
t["1"] = "string one"
print(t[1], t["1"])
-- rawget/rawset normalise too
rawset(t, 3.0, "c")
print(rawget(t, 3), rawget(t, 3.0))
-- large integers and their float neighbours
local k = math.maxinteger
t[k] = "max"
print(t[k], t[k + 0.0])
-- counting distinct keys
local seen = {}
for _, key in ipairs({1, 1.0, "1", 2, 2.0, 0, -0.0, 0.5}) do seen[key] = true end
local n = 0
for _ in pairs(seen) do n = n + 1 end
print("distinct", n)
