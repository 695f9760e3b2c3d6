-- An uncaught error() with a string: message with position, exit status 1,
-- and everything printed before it still reaches stdout.
print("before the error")
local function fail(what)
  error("boom: " .. what)
end
fail("uncaught")
print("not reached")
