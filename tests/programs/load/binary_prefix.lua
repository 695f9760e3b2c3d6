-- A chunk is binary when its first byte is ESC, as lua5.4 decides: a bad or truncated one is
-- "bad binary format", never compiled as source; text mode refuses it first.
print(load("\27"))
print(load("\27", "=mychunk"))
print(load("\27xyz", "@file.bin"))
print(load("\27", "name", "t"))
print(load("\27", "name", "bt"))
local f = load(string.dump(function() return 42 end))
print(f())
print(pcall(load, "\27"))

-- A whole signature but a chunk cut short is "truncated chunk" too (it said "bad bytecode:
-- truncated file" under the string's own chunk id), named "binary string" or by its name.
local dump = string.dump(function(a) return a * 2 end)
print(load(dump:sub(1, 3)))
print(load(dump:sub(1, #dump - 1)))
print(load(dump:sub(1, #dump - 1), "=cut"))

-- loadfile skips a first line starting with '#' and a binary chunk may follow it (it was
-- compiled as source, newline and all).
local name = os.tmpname()
local out = assert(io.open(name, "wb"))
out:write("#!/usr/bin/env lua\n", dump)
out:close()
print(loadfile(name)(21))
print(loadfile(name, "t"))
out = assert(io.open(name, "wb"))
out:write("# comment\nreturn select('#', ...), debug.getinfo(1, 'l').currentline\n")
out:close()
print(loadfile(name)(1, 2))
os.remove(name)
