-- os.exit with a numeric status ends the program at once; buffered output
-- written before is flushed.
print("before exit")
io.write("partial line without newline")
os.exit(3)
print("never printed")
