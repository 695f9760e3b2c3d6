-- A long string that never ends.
local s = [==[
some text ]] and ]=] but not the closer
print(s)
