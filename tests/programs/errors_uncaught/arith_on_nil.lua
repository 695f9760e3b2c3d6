-- An uncaught runtime error from arithmetic on a nil field.
local config = {width = 10}
print("width", config.width)
local area = config.width * config.height
print("not reached", area)
