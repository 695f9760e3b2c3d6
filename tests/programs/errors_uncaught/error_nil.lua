-- An uncaught error(nil).
print("raising nil")
error(nil)
