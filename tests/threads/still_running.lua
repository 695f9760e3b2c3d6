-- threads still running when the main thread returns are reported; the exit status is main's
local ch = thread.channel()
local h = thread.spawn(function() ch:recv() end)
local s = thread.spawn(function() thread.sleep(100) end)
thread.sleep(0.02)
print("main done")
