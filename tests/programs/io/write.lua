-- io.write with several arguments, numbers, chaining; print vs io.write.
io.write("a", "b", 1, 2.5, "\n")
-- io.write formats floats with %.14g directly: 1.0 is written as "1"
io.write(1e100, " ", -0.0, " ", math.maxinteger, " ", 2^63, " ", 1.0, " ", 0.1, "\n")
io.write()
io.write("")
local r = io.write("returns the file\n")
print(r == io.stdout, io.type(r))
io.stdout:write("chained ", "writes "):write("on ", "stdout"):write("\n")
print(pcall(io.write, {}))
print(pcall(io.write, nil))
print(pcall(io.write, true))
-- io.write of many pieces builds the same text as table.concat
local pieces = {}
for i = 1, 50 do pieces[i] = tostring(i * i) end
io.write(table.unpack(pieces))
io.write("\n")
print(table.concat(pieces))
-- print and io.write interleave in order
for i = 1, 3 do
  io.write("w", i, " ")
  print("p" .. i)
end
-- io.stderr exists and is a different file (its output is not checked)
print(io.type(io.stderr), io.stderr ~= io.stdout)
io.stderr:write("this goes to stderr\n")
print(io.type(42), io.type(io.stdin))
-- io.output() is stdout by default
print(io.output() == io.stdout)
