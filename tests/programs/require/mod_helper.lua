-- A module used by require/basic.lua: counts how often it is loaded.
LOAD_COUNT = (LOAD_COUNT or 0) + 1
local M = {}
M.name = ...            -- require passes the module name
M.loaded_from = select(2, ...)
function M.greet(who) return "hello, " .. who end
local private = 0
function M.bump() private = private + 1; return private end
return M
