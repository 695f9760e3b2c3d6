-- Failing io operations return nil plus a message instead of raising.
local f, msg, code = io.open("/nonexistent/dir/file.txt", "r")
print(f, type(msg), math.type(code))
print(msg:find("No such file or directory", 1, true) ~= nil)
print(msg:find("/nonexistent/dir/file.txt", 1, true) == 1)
local f2, msg2 = io.open("definitely_missing_file.txt")
print(f2, msg2)
-- io.lines on a missing file raises
local ok, err = pcall(io.lines, "definitely_missing_file.txt")
print(ok, err)
-- writing to a file opened for reading fails softly
local name = os.tmpname()
local w = assert(io.open(name, "w"))
w:write("data")
w:close()
local r = assert(io.open(name, "r"))
local res, werr = r:write("x")
print(res, type(werr))
r:close()
-- operations on closed files raise
print(pcall(r.read, r))
print(pcall(io.close, r))
-- bad read formats raise
local r2 = assert(io.open(name))
-- (the function name in these messages depends on how the method was
-- called, so only the parenthesised reason is printed)
local function reason(ok, e) return ok, e:match("%((.*)%)$") end
print(reason(pcall(r2.read, r2, "x")))
print(reason(pcall(r2.read, r2, {})))
r2:close()
os.remove(name)
print(io.type(io.stdout))
