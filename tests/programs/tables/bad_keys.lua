-- nil and NaN cannot be table keys; reading them is allowed.
local t = {}
print(pcall(function() t[nil] = 1 end))
print(pcall(function() t[0/0] = 1 end))
print(pcall(rawset, t, nil, 1))
print(t[nil], t[0/0])
print(pcall(function() return {[nil] = 1} end))
-- assigning nil to a missing key is fine
t.x = nil
print(next(t))
-- indexing non-tables
print(pcall(function() local n = nil; return n.x end))
print(pcall(function() local n = 5; return n.x end))
print(pcall(function() local b = true; b.x = 1 end))
print(pcall(function() return type(("abc").len) end))
