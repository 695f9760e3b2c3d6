-- The length operator on sequences, after growth and shrinking.
local t = {}
for i = 1, 100 do t[i] = i end
print(#t)
t[#t] = nil
print(#t)
for i = #t, 51, -1 do t[i] = nil end
print(#t)
t[#t + 1] = "x"
print(#t, t[#t])
print(#{}, #{nil}, #{1, 2, 3}, #{n = 1})
-- a table filled backwards is still a sequence once complete
local b = {}
for i = 10, 1, -1 do b[i] = i end
print(#b)
-- strings
print(#"", #"abc", #"\0\0", #("x"):rep(1000))
-- table.insert / remove keep it a sequence
local q = {}
for i = 1, 5 do table.insert(q, i) end
table.remove(q, 1)
print(#q, q[1], q[#q])
-- length of a table used as a stack
local stack = {}
for i = 1, 1000 do stack[#stack + 1] = i end
local popped = 0
while #stack > 0 do stack[#stack] = nil; popped = popped + 1 end
print(popped, #stack)
-- rawlen ignores __len
local proxy = setmetatable({1, 2}, {__len = function() return 42 end})
print(#proxy, rawlen(proxy), rawlen("abcd"))
-- float keys that are integers count for the sequence
local fk = {}
fk[1.0], fk[2.0], fk[3] = "a", "b", "c"
print(#fk)
