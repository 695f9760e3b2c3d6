-- An uncaught error whose value is a table without __tostring.
print("raising a table")
error({code = 42})
