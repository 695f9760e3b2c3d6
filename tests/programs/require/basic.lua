-- require finds modules next to the main script (./?.lua) and in
-- subfolders (dots become slashes), caches them in package.loaded.
local helper = require("mod_helper")
print(helper.greet("world"), helper.name, LOAD_COUNT)
print("loader data", helper.loaded_from)
local again = require("mod_helper")
print("cached", again == helper, LOAD_COUNT, package.loaded["mod_helper"] == helper)
print(helper.bump(), again.bump())

local geo = require("modules.geometry")
print(geo.area(3, 4), geo.perimeter(3, 4), geo.helper == helper, LOAD_COUNT)

-- a module returning nothing is recorded as true
print(require("modules.noreturn"), NORETURN_RAN, package.loaded["modules.noreturn"])

-- a second result: the file the module came from
local _, where = require("modules.geometry")
print("second result on cached require", where)

-- package.loaded can be pre-filled, and package.preload provides loaders
package.loaded["virtual"] = {virtual = true}
print(require("virtual").virtual)
package.preload["pre"] = function(name, extra) return {name = name, extra = extra} end
local pre = require("pre")
print(pre.name, pre.extra)

-- forcing a reload by clearing package.loaded
package.loaded["mod_helper"] = nil
local fresh = require("mod_helper")
print("reloaded", fresh ~= helper, LOAD_COUNT)

-- failures: missing module, module raising an error, syntax error in module
local ok, err = pcall(require, "no_such_module_xyz")
print(ok, err:match("^module 'no_such_module_xyz' not found:") ~= nil)
print(err:find("no file './no_such_module_xyz.lua'", 1, true) ~= nil)
local ok2, err2 = pcall(require, "modules.failing")
print(ok2, err2:match("failing module refuses to load") ~= nil)
print(package.loaded["modules.failing"])
local ok3, err3 = pcall(require, "modules.badsyntax")
print(ok3, err3:match("^error loading module 'modules.badsyntax' from file './modules/badsyntax.lua':") ~= nil)
print(type(package.path), type(package.cpath), package.config:sub(1, 1))
print(package.path:find("./?.lua", 1, true) ~= nil)
