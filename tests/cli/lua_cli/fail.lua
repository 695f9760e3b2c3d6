-- a runtime error two calls deep: message and traceback
local function inner(t) return t.field.sub end
local function outer() return inner({}) end
print("before")
outer()
