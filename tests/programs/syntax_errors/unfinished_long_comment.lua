-- A long comment that never ends.
print("before")
--[[ this comment
never ends
