-- Comments and long brackets of every level.
--[[ a long comment
print("not printed")
]]
--[==[ a long comment with ]] and ]=] inside
print("not printed either")
]==]
print("after comments") -- trailing comment

local a = [[first line
second line]]
print(a)
print(#a)

-- a newline right after the opening bracket is skipped
local b = [[
skipped leading newline]]
print(b)

local c = [==[contains ]] and ]=] but ends here]==]
print(c)

local d = [=[
line1
  line2 with \n no escapes \t]=]
print(d)

-- long strings keep escapes literally and count bytes
local e = [[\x41\65]]
print(e, #e)

-- empty long strings
print("[" .. [[]] .. "]", #[==[]==])

-- CR LF sequences inside long strings become \n
local f = load("return [[x\r\ny]]")()
print(#f, f:byte(2))

-- --[ alone is a short comment, the code on the next line runs
--[ print("short")
print("--[ is a line comment")
---[[ this is a line comment too, so the block below runs
print("block runs")
--]]
