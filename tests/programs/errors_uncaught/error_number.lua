-- An uncaught error whose value is a number: lua.c converts it to a string
-- (numbers are strings for the message handler), so no "(error object...)".
print("raising 42")
error(42)
