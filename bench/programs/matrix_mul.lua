-- Dense matrix multiplication on nested tables (rows of arrays), with
-- integer-valued entries so the checksum is exact in every implementation.
-- Optional argument: matrix size.
local n = tonumber(arg and arg[1]) or 330
local function matrix(n, seed)
  local m = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do
      seed = (seed * 1103 + 12345) % 65536
      row[j] = seed % 17 - 8
    end
    m[i] = row
  end
  return m
end
local function mul(a, b, n)
  local c = {}
  for i = 1, n do
    local ci, ai = {}, a[i]
    for j = 1, n do ci[j] = 0 end
    for k = 1, n do
      local aik, bk = ai[k], b[k]
      for j = 1, n do ci[j] = ci[j] + aik * bk[j] end
    end
    c[i] = ci
  end
  return c
end
local function transpose(a, n)
  local t = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = a[j][i] end
    t[i] = row
  end
  return t
end
local a, b = matrix(n, 1), matrix(n, 2)
local c = mul(a, b, n)
local d = mul(transpose(c, n), a, n)
local sum = 0
for i = 1, n do
  for j = 1, n do sum = (sum + d[i][j] * (i + j)) % 1000000007 end
end
print(string.format("n=%d trace=%d checksum=%d", n, (function()
  local t = 0
  for i = 1, n do t = t + c[i][i] end
  return t
end)(), sum))
