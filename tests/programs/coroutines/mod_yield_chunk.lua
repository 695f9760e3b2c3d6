-- Run by yield_through_c.lua through dofile: the chunk yields to the coroutine that runs it.
local a = coroutine.yield('from dofile')
return a * 2
