-- Multiple results: adjustment in calls, assignments, constructors, parens.
local function three() return 1, 2, 3 end
local function none() end
print(three())
print(three(), "x")
print("x", three())
print((three()))
local a, b, c, d = three()
print(a, b, c, d)
local e, f = none()
print(e, f)
local t = {three(), three()}
print(#t, t[1], t[2], t[4])
t = {three(), (three())}
print(#t)
print(select("#", none()), select("#", (none())))
-- return f() is a tail call that keeps all results
local function pass() return three() end
print(pass())
local function paren() return (three()) end
print(paren())
-- results in the middle of an argument list are truncated to one
print(math.max(three(), 0), math.max(0, three()))
print(string.format("%d %d %d", three()))
-- swapping and multiple assignment evaluation order
local x, y = 1, 2
x, y = y, x
print(x, y)
local arr = {10, 20, 30}
local i = 1
i, arr[i] = i + 1, 99
print(i, arr[1], arr[2])
-- extra values are dropped, missing ones are nil
local p, q = 1
local r = 1, 2, 3
print(p, q, r)
-- many results
local function many(n)
  local res = {}
  for k = 1, n do res[k] = k end
  return table.unpack(res)
end
print(select("#", many(250)), select(250, many(250)))
