-- Side effects under shadow profiling (run_shadow_tests.py): the program writes a file and
-- prints lines while it computes, reads its file back (a regular file: a shadow may read it
-- on a private offset), appends to it, optionally reads its standard input (a pipe: a shadow
-- must end before reading it) and calls into C (ffi: a shadow ends there). Short computations
-- between the effects, so shadows meet every kind of them. Its stdout and its file must be
-- byte for byte those of a run without shadows.
-- Usage: shadow_effects.lua OUT [stdin|ffi]   (stdin: reads 120 lines)
local out, mode = assert(arg[1], "usage: shadow_effects.lua OUT [stdin|ffi]"), arg[2]
local function work(n) local s = 0 for i = 1, n do s = (s + i * i) % 1000003 end return s end
local strlen = mode == "ffi" and ffi.load("c"):func("strlen", "int64", {"string"})
local f = assert(io.open(out, "w"))
for i = 1, 6000 do
  local v = work(40)
  f:write(string.format("line %d %d\n", i, v))
  if i % 60 == 0 then
    print("progress", i, v)
    io.write("w ", i, "\n")
  end
  if i % 120 == 0 then f:flush() end
  if mode == "stdin" and i % 50 == 0 then print("input", io.read("l")) end
  if strlen and i % 50 == 0 then print("strlen", strlen(tostring(v))) end
end
f:close()
local n, sum = 0, 0
for line in io.lines(out) do
  n = n + 1
  sum = (sum + #line * work(5)) % 1000003
end
print("read back", n, sum)
for i = 1, 30 do
  local g = assert(io.open(out, "a"))
  g:write("appended ", i, " ", work(400), "\n")
  g:close()
end
print("done")
