-- A thread inside a foreign call counts as stopped. One thread blocks in C for about 1.5 s
-- (fgets on a pipe from "sleep 1.5; echo woke", all through ffi), while the main thread runs
-- 20 full collections, each of which needs every other thread stopped, and must finish them
-- long before the reader comes back. If the foreign call held up the collections, the
-- reader would return first and see done == false. (A read is restarted after the
-- collector's signals; a sleep such as usleep would return early with EINTR.)
local libc = ffi.load("c")
local popen = libc:func("popen", "pointer", {"string", "string"})
local pclose = libc:func("pclose", "int", {"pointer"})
local fgets = libc:func("fgets", "string", {"pointer", "int", "pointer"})
local malloc = libc:func("malloc", "pointer", {"int64"})
local free = libc:func("free", "void", {"pointer"})

local fp = assert(popen("sleep 1.5; echo woke", "r"))
local buf = assert(malloc(64))
local ready = thread.channel(1)
local done = false
local reader = thread.spawn(function()
  ready:send(true)
  local line = fgets(buf, 64, fp)
  return line, done
end)
ready:recv()
thread.sleep(0.1)  -- let the reader enter fgets
local junk = {}
for i = 1, 20 do
  for j = 1, 200 do junk[j] = {i, j} end
  collectgarbage("collect")
end
done = true
local line, seen = reader:join()
print("line", line)
print("collections finished during the foreign call", seen)
print("pclose", pclose(fp))
free(buf)
