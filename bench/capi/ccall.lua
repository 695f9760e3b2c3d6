-- Calls from Lua into trivial C functions of a C module (tests/capi/capitest.c, loaded by
-- lua5.4 and tandem alike): noop() takes one argument and returns nothing; add(a, b) checks
-- two integers and returns their sum. Prints a checksum, then the time of each loop.
local ct = require "capitest"
local N = math.tointeger(tonumber(arg and arg[1]) or 20000000)
local noop, add = ct.noop, ct.add
local t0 = os.clock()
for i = 1, N do noop(i) end
local t1 = os.clock()
local s = 0
for i = 1, N do s = add(s, 1) end
local t2 = os.clock()
print(string.format("%d", s))
print(string.format("elapsed_noop: %.4f", t1 - t0))
print(string.format("elapsed_add: %.4f", t2 - t1))
print(string.format("elapsed: %.4f", t2 - t0))
