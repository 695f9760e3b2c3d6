-- debug.setlocal from a function called for a table constructor's last values replaces the
-- register that holds the table being built; the constructor's SETLIST then finds a number
-- there. lua5.4 stores into it as if it were a table (and crashes), so this lives among the
-- CLI checks, not the oracle-checked programs; Tandem raises an error.
local function g()
  debug.setlocal(2, 1, 42)   -- the caller's first register: the constructor's table
  return 1, 2
end
local function f()
  local t = {g()}
  return t
end
local ok, err = pcall(f)
print(ok, (tostring(err):gsub("^.-:%d+: ", "")))

-- the same constructor without the replacement still works, and a local set by name too
local function h()
  local a = 1
  local t = {a, (function() debug.setlocal(2, 1, 7) return 2, 3 end)()}
  return a, #t, t[1], t[2], t[3]
end
print(pcall(h))
