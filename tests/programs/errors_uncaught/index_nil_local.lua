-- Indexing a nil local inside a method gives the variable name.
local Obj = {}
Obj.__index = Obj
function Obj:get() local inner = self.missing; return inner.value end
local o = setmetatable({}, Obj)
io.write("partial output ")
print(o:get())
