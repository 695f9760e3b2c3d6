-- Forwarding varargs through calls, tables and closures.
local function sum(...)
  local s = 0
  for _, v in ipairs({...}) do s = s + v end
  return s
end
local function forward(...) return sum(...) end
print(forward(1, 2, 3, 4), forward())

-- varargs combined with fixed parameters
local function fixed(a, b, ...)
  return a, b, select("#", ...), ...
end
print(fixed(1))
print(fixed(1, 2, 3, 4))

-- a vararg function used as a wrapper that logs calls
local log = {}
local function wrap(f)
  return function(...)
    log[#log + 1] = select("#", ...)
    return f(...)
  end
end
local wmax = wrap(math.max)
print(wmax(3, 9, 2), wmax(1))
print(table.concat(log, ","))

-- varargs in a table constructor in the middle versus at the end
local function mid(...) return {..., "end"} end
local function tail(...) return {"start", ...} end
local m, t = mid(1, 2, 3), tail(1, 2, 3)
print(#m, m[1], m[2], #t, t[4])

-- varargs captured in a closure must be copied into a table first
local function delayed(...)
  local args = table.pack(...)
  return function() return table.unpack(args, 1, args.n) end
end
print(delayed("x", nil, "z")())

-- string.format with forwarded arguments
local function fmt(pattern, ...) return pattern:format(...) end
print(fmt("%s=%d, %s=%d", "a", 1, "b", 2))
-- passing more than 200 values through varargs
local big = {}
for i = 1, 300 do big[i] = i end
print(forward(table.unpack(big)))
