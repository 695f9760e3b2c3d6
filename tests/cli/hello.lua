local function greet(name) return ("hello, %s"):format(name) end
for i = 1, 3 do print(greet("tandem " .. i)) end
