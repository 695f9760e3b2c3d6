-- The same label twice in one function.
::a::
print(1)
::a::
