-- lua-filesystem (Debian's lfs.so): make a tree, walk it, attributes, touch, locks, errors.
-- Run in a fresh temporary directory (run_capi_tests.py).
local lfs = require "lfs"
print(lfs._VERSION ~= nil, type(lfs.currentdir()))
local root = "tree"
assert(lfs.mkdir(root))
print(lfs.mkdir(root))
for _, d in ipairs{"a", "a/b", "c"} do assert(lfs.mkdir(root .. "/" .. d)) end
local function write(path, n)
  local f = assert(io.open(path, "wb")); f:write(string.rep("x", n)); f:close()
end
write(root .. "/a/one.txt", 10)
write(root .. "/a/b/two.txt", 200)
write(root .. "/c/three.bin", 3000)
write(root .. "/top", 0)

local function walk(dir, out)
  local names = {}
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local path = dir .. "/" .. name
    local attr = lfs.attributes(path)
    out[#out + 1] = string.format("%s %s %d", path, attr.mode, attr.mode == "file" and attr.size or 0)
    if attr.mode == "directory" then walk(path, out) end
  end
  return out
end
print(table.concat(walk(root, {}), "\n"))

local a = lfs.attributes(root .. "/c/three.bin")
print(a.size, a.mode, a.nlink, type(a.modification), type(a.ino), a.permissions:sub(1, 3))
print(lfs.attributes(root .. "/c/three.bin", "size"), lfs.attributes(root, "mode"))
print(lfs.touch(root .. "/top", 1000000, 2000000))
print(lfs.attributes(root .. "/top", "access"), lfs.attributes(root .. "/top", "modification"))
print(lfs.symlinkattributes(root .. "/top", "mode"))
print(lfs.link(root .. "/top", root .. "/link", true))
print(lfs.symlinkattributes(root .. "/link", "mode"), lfs.attributes(root .. "/link", "mode"))
print(lfs.symlinkattributes(root .. "/link", "target"))

local old = lfs.currentdir()
print(lfs.chdir(root .. "/a"))
print(lfs.currentdir() == old .. "/" .. root .. "/a")
print(lfs.chdir(old))

local f = io.open(root .. "/lockme", "w")
print(lfs.lock(f, "w"), lfs.unlock(f))
f:close()
local lock = lfs.lock_dir(root)
print(type(lock))
if lock then lock:free() end

-- iterator object form
local iter, d = lfs.dir(root)
local n = 0
while iter(d) do n = n + 1 end
print("entries", n)
local it, dd = lfs.dir(root)
dd:close()

-- errors
print(lfs.attributes("no/such/file"))
print(lfs.rmdir(root .. "/c"))
print(lfs.chdir("no/such/dir"))
print(pcall(lfs.dir, "no/such/dir"))
print(pcall(lfs.attributes, root, "nonsense"))
print(pcall(lfs.mkdir))
print(pcall(lfs.lock, "notafile"))
os.remove(root .. "/c/three.bin")
print(lfs.rmdir(root .. "/c"))
