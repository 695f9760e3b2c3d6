-- A statement that is an expression without assignment.
local a = 1
local b = a
x y = 2
