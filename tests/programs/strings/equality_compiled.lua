-- String equality as compiled code tests it (EQ between registers, EQK against a constant):
-- the same String, equal bytes in different Strings (strings made at run time are not
-- interned, nor are long ones), different lengths, the same length with different bytes,
-- embedded zeros, and a string against other types. Each loop is compiled.
local long1 = string.rep("abcdefghij", 6)
local long2 = string.rep("abcde", 12) .. ""
long2 = long2:gsub("abcde", "abcdefghij", 6):sub(1, 60)
local function eqk(s)
  local n = 0
  for _ = 1, 50 do
    if s == "add" then n = n + 1 end
    if s ~= "sub" then n = n + 10 end
    if s == "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij" then n = n + 100 end
    if s == "a\0b" then n = n + 1000 end
  end
  return n
end
local made = table.concat({"a", "d", "d"})
print(eqk("add"), eqk(made), eqk("sub"), eqk("adc"), eqk("ad"), eqk(long1), eqk(long2),
      eqk("a\0b"), eqk("a\0c"), eqk(42), eqk(nil), eqk({}))
local function eq(a, b)
  local n = 0
  for _ = 1, 50 do if a == b then n = n + 1 end; if a ~= b then n = n - 1 end end
  return n
end
print(eq("x", "x"), eq(made, "add"), eq(long1, long2), eq(long1, long1 .. "!"), eq("a\0b", "a\0c"),
      eq("1", 1), eq(1, "1"), eq("", ""), eq("", string.sub("abc", 4)))
-- a compiled dispatch on string opcodes
local function run(prog)
  local acc = 0
  for _, ins in ipairs(prog) do
    local op, v = ins[1], ins[2]
    if op == "push" then acc = v
    elseif op == "add" then acc = acc + v
    elseif op == "mul" then acc = acc * v
    elseif op == "neg" then acc = -acc
    else error("bad op " .. tostring(op)) end
  end
  return acc
end
local prog = {}
for i = 1, 300 do
  local ops = {"push", "add", "mul", "neg"}
  prog[i] = {ops[i % 4 + 1] .. "", i % 7}
end
print(run(prog), pcall(run, {{"push", 1}, {"pop", 2}}))
