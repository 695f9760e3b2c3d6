-- A table constructor without its closing brace.
local t = {
  a = 1,
  b = 2
local u = 3
