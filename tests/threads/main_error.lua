-- the main thread fails while another runs: main's error and status win
local h = thread.spawn(function() thread.sleep(100) end)
print("before")
error("main failed")
