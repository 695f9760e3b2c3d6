-- The oracle of -Xprofile.format=annotate (run_analysis_tests.py, "annotate"), run by lua5.4:
-- runs the program arg[1] with a line hook in the main coroutine and in every coroutine it
-- creates (lua5.4's hooks are per coroutine), and writes to stderr, for each function of the
-- program ("linedefined:line count", main chunk 0), how often the hook fired on each line:
-- control came to the line from another, or jumped back to it.
local prog = assert(arg[1], "usage: lua5.4 line_hook_oracle.lua PROGRAM")
local source = "@" .. prog
local counts = {}
local function hook(_, line)
  local info = debug.getinfo(2, "S")
  if info.source == source then
    local k = info.linedefined .. ":" .. line
    counts[k] = (counts[k] or 0) + 1
  end
end
local create, resume = coroutine.create, coroutine.resume
coroutine.create = function(f)
  local co = create(f)
  debug.sethook(co, hook, "l")
  return co
end
coroutine.wrap = function(f)
  local co = coroutine.create(f)
  return function(...)
    local r = table.pack(resume(co, ...))
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
end
local chunk = assert(loadfile(prog))
arg = {[0] = prog}
debug.sethook(hook, "l")
chunk()
debug.sethook()
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do io.stderr:write(k, " ", counts[k], "\n") end
