-- a failing thread that nobody joins is reported when the program ends
local h = thread.spawn(function() error("lost error") end)
thread.sleep(0.05)
print("main done")
