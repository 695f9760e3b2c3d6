-- A realistic program: serialise nested tables to Lua source with sorted
-- keys, read it back with load, and compare structurally.
local function serialize(v, indent)
  indent = indent or ""
  local t = type(v)
  if t == "string" then return string.format("%q", v)
  elseif t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.17g", v)
  elseif t == "boolean" or t == "nil" then return tostring(v)
  elseif t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      if ta == "boolean" then return not a and b end
      return a < b
    end)
    local inner = indent .. "  "
    local out = {"{"}
    for _, k in ipairs(keys) do
      local ks = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. serialize(k) .. "]"
      out[#out + 1] = inner .. ks .. " = " .. serialize(v[k], inner) .. ","
    end
    out[#out + 1] = indent .. "}"
    return table.concat(out, "\n")
  end
  error("cannot serialize a " .. t)
end

local function deep_equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b or (a ~= a and b ~= b) end
  for k, v in pairs(a) do if not deep_equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local data = {
  name = "tandem",
  version = {major = 0, minor = 1, patch = 3},
  tags = {"lua", "runtime", "profiler"},
  ratio = 0.1,
  big = math.maxinteger,
  flags = {[true] = "yes", [false] = "no"},
  ["key with spaces"] = "quoted\nnewline",
  [10] = 1.5e300,
  nested = {{1, 2}, {3, {4, {5}}}},
}
local text = serialize(data)
print(text)
local back = load("return " .. text)()
print("round trip equal", deep_equal(data, back))
print("serialize twice identical", serialize(back) == text)
print(pcall(serialize, {f = print}))
