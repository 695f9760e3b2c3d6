-- A module in a subfolder, loaded as "modules.geometry".
local geometry = {}
function geometry.area(w, h) return w * h end
function geometry.perimeter(w, h) return 2 * (w + h) end
-- modules can require other modules
geometry.helper = require("mod_helper")
return geometry
