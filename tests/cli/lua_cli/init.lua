-- LUA_INIT=@init.lua
x = "from init.lua"
print("init.lua ran")
