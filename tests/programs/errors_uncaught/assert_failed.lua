-- A failing assert with and without a message.
local function parse(s) return tonumber(s) end
print(assert(parse("12")))
local v = assert(parse("twelve"), "not a number: twelve")
print("not reached", v)
