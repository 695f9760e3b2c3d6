-- A producer/consumer pipeline with filters, built from coroutines.
local function producer(items)
  return coroutine.create(function()
    for _, item in ipairs(items) do coroutine.yield(item) end
  end)
end
local function receive(prod)
  local ok, v = coroutine.resume(prod)
  return ok and v or nil
end
local function filter(prod, pred)
  return coroutine.create(function()
    while true do
      local v = receive(prod)
      if v == nil then return end
      if pred(v) then coroutine.yield(v) end
    end
  end)
end
local function map(prod, f)
  return coroutine.create(function()
    for v in function() return receive(prod) end do coroutine.yield(f(v)) end
  end)
end
local data = {}
for i = 1, 30 do data[i] = i end
local pipeline = map(filter(producer(data), function(x) return x % 3 == 0 end), function(x) return x * x end)
local out = {}
while true do
  local v = receive(pipeline)
  if v == nil then break end
  out[#out + 1] = v
end
print(table.concat(out, " "))

-- a line-splitting consumer fed chunk by chunk
local splitter = coroutine.wrap(function()
  local buffer, lines = "", {}
  while true do
    local chunk = coroutine.yield(#lines)
    if chunk == nil then break end
    buffer = buffer .. chunk
    while true do
      local nl = buffer:find("\n", 1, true)
      if not nl then break end
      lines[#lines + 1] = buffer:sub(1, nl - 1)
      buffer = buffer:sub(nl + 1)
    end
  end
  if #buffer > 0 then lines[#lines + 1] = buffer end
  return table.concat(lines, "|")
end)
splitter()
for _, chunk in ipairs({"ab", "c\nde", "f\n\ngh", "i"}) do io.write(splitter(chunk), " ") end
print()
print(splitter(nil))

-- round-robin scheduler of several tasks
local tasks, log = {}, {}
for id = 1, 3 do
  tasks[#tasks + 1] = coroutine.create(function()
    for step = 1, id do
      log[#log + 1] = id .. "." .. step
      coroutine.yield()
    end
  end)
end
while #tasks > 0 do
  for i = #tasks, 1, -1 do
    coroutine.resume(tasks[i])
    if coroutine.status(tasks[i]) == "dead" then table.remove(tasks, i) end
  end
end
print(table.concat(log, " "))
