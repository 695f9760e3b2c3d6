-- Regression: string.rep with a result beyond lua5.4's limit (INT_MAX bytes, lstrlib's
-- MAXSIZE) tried to allocate it and failed with "not enough memory" (or built a 2 GB
-- string); lua5.4 refuses it with "resulting string too large" before allocating.
local function try(...)
  local ok, r = pcall(string.rep, ...)
  print(ok, ok and #r or r)
end
try("x", 1 << 31)            -- 2^31 bytes: one more than INT_MAX
try("x", 1 << 40)
try("x", math.maxinteger)
try("ab", 1 << 30)           -- 2^31 bytes
try("x", 1 << 30, "y")       -- 2^31 - 1 bytes with the separators: the size check counts
                             -- l + lsep per copy, as lua5.4 does: refused
try("abc", 1 << 62, ",")
try(string.rep("x", 1000), 1 << 22) -- 4 GB
try("x", 10, "--")
try("", 5, "")
try("xy", 0)
try("xy", -3)
try("xy", 3, "")
-- string.byte: a slice is limited by the stack first
local s = string.rep("x", 2000000)
print(pcall(string.byte, s, 1, -1))
print(select("#", string.byte(s, 1, 10000)))
-- string.packsize: the same limit
print(pcall(string.packsize, "i16i16i16" .. string.rep("c1000000000", 3)))
print(pcall(string.packsize, string.rep("c1000000000", 2)))
