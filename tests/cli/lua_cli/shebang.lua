#!/usr/bin/env lua5.4
print("after the shebang line", ...)
