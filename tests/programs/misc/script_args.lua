-- The global arg table and the main chunk's varargs (arguments come from
-- script_args.args, one per line).
print("#arg", #arg)
print("arg[1]", arg[1])
print("arg[2]", arg[2])
print("arg[3]", arg[3], #arg[3])
print("arg[0] is the script", arg[0]:match("script_args%.lua$") ~= nil)
print("arg[-1] is the interpreter", type(arg[-1]))
print("varargs", select("#", ...), ...)
local n = tonumber(arg[2])
print("numeric argument doubled", n and n * 2)
