-- %b balanced matches and %f frontier patterns.
print(("x = f(a, g(b, c)) + h(d)"):match("%b()"))
for b in ("(a)(b(c))((d))"):gmatch("%b()") do io.write(b, " ") end
print()
print(("{outer {inner} text}"):match("%b{}"))
print(("no close ( here"):match("%b()"))
print(("[[x]]"):gsub("%b[]", "B"))
print(("if x then y end"):match("%bie"))
-- frontier: whole words only
print(("THE (quick) fox"):find("%f[%a]%a+%f[%A]"))
print(("the cat concatenates"):gsub("%f[%w]cat%f[%W]", "dog"))
print(("hello world"):gsub("%f[%w]%w", string.upper))
-- frontier at the start and end of the subject
print(("word"):find("%f[%w]"), ("word"):find("%f[%W]"))
print(("aaa bbb"):gsub("%f[%l]", "|"))
-- stripping comments with %b
local code = "x = 1 --[[ a comment ]] + 2 --[[ another ]]"
print((code:gsub("%-%-%b[]", "")))
-- counting nested parentheses depth with gmatch over %b
local expr = "((1+2)*(3+(4*5)))"
local function depth(s)
  local best = 0
  for inner in s:sub(2, -2):gmatch("%b()") do
    best = math.max(best, depth(inner))
  end
  return best + 1
end
print("depth", depth(expr))
print(pcall(string.find, "x", "%b"))
print(pcall(string.find, "x", "%f"))
