-- package.searchpath and a custom searcher.
print(package.searchpath("mod_helper", "./?.lua"))
print(package.searchpath("modules.geometry", "./?.lua"))
print(package.searchpath("modules.geometry", "./?.lua", ".", "_"))
local p, err = package.searchpath("nothing_here", "./?.lua;./?/init.lua")
print(p, err)
-- a searcher added at the front serves modules from a table of sources
local sources = {
  ["gen.squares"] = "local n = ... return {name = n, value = 7 * 7}",
}
table.insert(package.searchers, 1, function(name)
  local src = sources[name]
  if not src then return "\n\tno virtual source '" .. name .. "'" end
  return assert(load(src, "=" .. name)), "virtual:" .. name
end)
local sq, data = require("gen.squares")
print(sq.name, sq.value, data)
-- the searcher's message is part of the not-found error
local ok, e = pcall(require, "absent.mod")
print(ok, e:find("no virtual source 'absent.mod'", 1, true) ~= nil)
-- dofile and loadfile on the module files
local geo = dofile("modules/geometry.lua")
print(geo.area(2, 5))
local chunk = loadfile("mod_helper.lua")
print(type(chunk), chunk("as_chunk").name)
print(loadfile("missing_file.lua"))
