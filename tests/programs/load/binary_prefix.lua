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
