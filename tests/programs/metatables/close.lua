-- To-be-closed variables (local x <close>) and the __close metamethod.
local log = {}
local function closer(name)
  return setmetatable({}, {__close = function(self, err)
    log[#log + 1] = name .. (err and (":" .. tostring(err)) or "")
  end})
end

do
  local a <close> = closer("a")
  local b <close> = closer("b")
  log[#log + 1] = "body"
end
print(table.concat(log, " "))

-- closed on return, with the return values computed first
log = {}
local function f()
  local x <close> = closer("x")
  return "ret"
end
print(f(), table.concat(log, " "))

-- closed on error, receiving the error object; error propagates
log = {}
local ok, err = pcall(function()
  local y <close> = closer("y")
  error("boom", 0)
end)
print(ok, err, table.concat(log, " "))

-- nil and false are allowed and ignored
do
  local n <close> = nil
  local f2 <close> = false
end
print("nil/false ok")

-- a value without __close is an error at declaration
print(pcall(function() local bad <close> = {} end))

-- closed in loops on break and on each iteration
log = {}
for i = 1, 3 do
  local c <close> = closer("i" .. i)
  if i == 2 then break end
end
print(table.concat(log, " "))

-- <const> variables
local K <const> = 10
local S <const> = "str"
print(K * 2, S .. "!")

-- an error inside __close replaces the original error
log = {}
local ok2, err2 = pcall(function()
  local z <close> = setmetatable({}, {__close = function() error("close failed", 0) end})
  error("original", 0)
end)
print(ok2, err2)

-- goto out of a block closes its variables
log = {}
do
  local g <close> = closer("g")
  goto out
end
::out::
print(table.concat(log, " "))
