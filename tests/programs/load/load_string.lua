-- load with string chunks: results, varargs, chunk names, modes.
local f = load("return 1 + 2")
print(type(f), f())
print(load("return ...")(1, 2, 3))
print(load("local a, b = ... return a * b")(6, 7))
-- a chunk is a vararg function with its own locals
local counter = load("count = (count or 0) + 1 return count")
counter(); counter()
print(count)
-- chunk names appear in error messages
local bad = load("error('inside chunk')", "=mychunk")
print(pcall(bad))
local bad2 = load("error('inside chunk')", "@file.lua")
print(pcall(bad2))
local bad3 = load("local x = 1\nerror('line two')", "some code")
print(pcall(bad3))
local bad4 = load("error('default name')")
print(pcall(bad4))
-- load compiles once, runs many times
local sq = load("local x = ... return x * x")
local s = 0
for i = 1, 100 do s = s + sq(i) end
print(s)
-- a chunk can define functions and return them
local lib = load([[
  local M = {}
  function M.double(x) return 2 * x end
  function M.greet(n) return "hi " .. n end
  return M
]])()
print(lib.double(21), lib.greet("lua"))
-- mode "t" accepts text; mode "b" rejects text
print(load("return 1", "x", "t")())
print(load("return 1", "x", "b"))
-- empty chunk
print(select("#", load("")()))
-- a very long chunk
local parts = {"local t = 0"}
for i = 1, 500 do parts[#parts + 1] = "t = t + " .. i end
parts[#parts + 1] = "return t"
print(load(table.concat(parts, "\n"))())
