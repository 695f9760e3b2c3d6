-- Identifiers, keywords used as field names, semicolons.
local _ = 1; local _x1 = 2; local X_Y_ = 3;;;
print(_, _x1, X_Y_)
local t = {}
t["end"] = 1; t["while"] = 2
print(t["end"], t["while"])
-- keywords cannot be names but can be string keys; Names are case sensitive
local And, OR, Nil = "And", "OR", "Nil"
print(And, OR, Nil)
local verylongidentifiername_with_many_characters_0123456789 = "long"
print(verylongidentifiername_with_many_characters_0123456789)
-- goto is a keyword, Goto is not
local Goto = "Goto"
print(Goto)
-- statements separated only by whitespace
local a = 1 local b = 2 print(a + b)
-- a call on a new line is still a call
local f = function(...) return select("#", ...) end
local r = f
(1, 2, 3)
print(r)
-- comments between tokens
print(--[[inline]] "after inline comment" --[==[ another ]==])
