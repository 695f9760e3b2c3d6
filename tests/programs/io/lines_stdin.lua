-- io.lines() over standard input: count lines, words and sum numbers.
local lines, words, sum, longest = 0, 0, 0, ""
for line in io.lines() do
  lines = lines + 1
  for w in line:gmatch("%S+") do
    words = words + 1
    local n = tonumber(w)
    if n then sum = sum + n end
  end
  if #line > #longest then longest = line end
end
print("lines", lines)
print("words", words)
print("sum", sum)
print("longest", longest)
-- after the loop stdin is at end of file
print(io.read("l"))
