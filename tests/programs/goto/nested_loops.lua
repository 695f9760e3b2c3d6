-- goto out of nested loops, backward gotos forming loops, label scoping.
local found
for i = 1, 10 do
  for j = 1, 10 do
    if i * j == 42 then
      found = i .. "x" .. j
      goto out
    end
  end
end
::out::
print("found", found)

-- a loop written with a backward goto
local n, sum = 0, 0
::top::
n = n + 1
sum = sum + n
if n < 100 then goto top end
print("sum", sum)

-- same label name in different blocks is allowed
for pass = 1, 2 do
  do
    goto l
    print("skipped")
    ::l::
  end
  do
    goto l
    print("skipped")
    ::l::
  end
  print("pass", pass)
end

-- a state machine with gotos
local input = "aabbbc"
local pos, out = 1, {}
::state_a::
if input:sub(pos, pos) == "a" then pos = pos + 1; out[#out + 1] = "A"; goto state_a end
::state_b::
if input:sub(pos, pos) == "b" then pos = pos + 1; out[#out + 1] = "B"; goto state_b end
if pos <= #input then out[#out + 1] = "?" .. input:sub(pos, pos) end
print(table.concat(out))
