-- io.open in read, write and append modes; file:read/lines/write/close.
local name = os.tmpname()
local f = assert(io.open(name, "w"))
print(io.type(f))
print(f:write("line one\n", "line two\n", 3, " ", 4.5, "\n") == f)
f:close()
print(io.type(f))
print(pcall(f.write, f, "x"))

f = assert(io.open(name, "a"))
f:write("appended\n")
f:close()

f = assert(io.open(name, "r"))
print(f:read("l"))
print(f:read("L"))
print(f:read("n", "n"))
print(f:read("l"))
print(f:read("a"))
print(f:read("l"), f:read("a"))
f:close()

-- file:lines with formats; io.lines with a file name closes it at the end
f = assert(io.open(name))
for a, b in f:lines(1, 2) do io.write("[", a, "|", b, "]") end
print()
f:close()
local count = 0
for l in io.lines(name) do count = count + 1 end
print("io.lines count", count)
for l in io.lines(name, "L") do io.write(l) end
for n in io.lines(name, "n") do print("number", n) end

-- "w" truncates, "r+" updates in place, "w+" and "a+" allow reading
f = assert(io.open(name, "w")); f:write("0123456789"); f:close()
f = assert(io.open(name, "r+")); f:write("AB"); f:close()
f = assert(io.open(name, "r")); print(f:read("a")); f:close()
f = assert(io.open(name, "w+")); f:write("fresh"); f:seek("set"); print(f:read("a")); f:close()
f = assert(io.open(name, "a+")); f:write("!"); f:seek("set"); print(f:read("a")); f:close()

-- binary data round trip
local bin = {}
for i = 0, 255 do bin[#bin + 1] = string.char(i) end
bin = table.concat(bin)
f = assert(io.open(name, "wb")); f:write(bin); f:close()
f = assert(io.open(name, "rb")); local back = f:read("a"); f:close()
print("binary round trip", back == bin, #back)

-- io.output / io.input redirection
io.output(name)
io.write("via io.write\n")
io.close()
io.output(io.stdout)
io.input(name)
print(io.read("l"))
io.close(io.input())
io.input(io.stdin)

-- tostring of files has a recognisable shape
f = assert(io.open(name))
print((tostring(f):gsub("0x%x+", "ADDR")))
f:close()
print(tostring(f))
print(pcall(io.open, name, "rz"))
os.remove(name)
