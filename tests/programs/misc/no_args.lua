-- Without arguments, arg has only non-positive indexes.
print("#arg", #arg, arg[1], select("#", ...))
print(type(arg[0]), arg[0])
