-- lua-lpeg (Debian's lpeg.so): an arithmetic grammar with captures and folding, a JSON
-- grammar, substitutions, match-time captures, errors.
local lpeg = require "lpeg"
local P, R, S, V, C, Ct, Cc, Cf, Cg, Cs, Cmt, Cp = lpeg.P, lpeg.R, lpeg.S, lpeg.V, lpeg.C, lpeg.Ct,
  lpeg.Cc, lpeg.Cf, lpeg.Cg, lpeg.Cs, lpeg.Cmt, lpeg.Cp
print(lpeg.version)

local space = S" \t\n"^0
local number = C(P"-"^-1 * R"09"^1 * (P"." * R"09"^1)^-1) / tonumber * space
local function tok(s) return P(s) * space end
local function fold(acc, op, v)
  if op == "+" then return acc + v elseif op == "-" then return acc - v
  elseif op == "*" then return acc * v else return acc / v end
end
local calc = P{
  "Exp",
  Exp = space * Cf(V"Term" * Cg(C(S"+-") * space * V"Term")^0, fold),
  Term = Cf(V"Factor" * Cg(C(S"*/") * space * V"Factor")^0, fold),
  Factor = number + tok"(" * V"Exp" * tok")",
}
calc = calc * -1
for _, e in ipairs{"1+2*3", "(1+2)*3", " 10 / 4 - 1 ", "2*(3+(4-1))*2", "1+", "-3*-3", "7"} do
  print(e, calc:match(e))
end

-- JSON values to Lua tables
local json = P{
  "Value",
  Value = space * (V"Object" + V"Array" + V"String" + V"Number" + V"Lit") * space,
  Object = Ct(tok"{" * (V"Pair" * (tok"," * V"Pair")^0)^-1 * tok"}") / function(t)
    local o = {}
    for _, kv in ipairs(t) do o[kv[1]] = kv[2] end
    return o
  end,
  Pair = Ct(space * V"String" * space * tok":" * V"Value"),
  Array = Ct(tok"[" * (V"Value" * (tok"," * V"Value")^0)^-1 * tok"]"),
  String = P'"' * Cs(((P"\\n" / "\n") + (P'\\"' / '"') + (1 - S'"\\'))^0) * P'"',
  Number = number,
  Lit = P"true" * Cc(true) + P"false" * Cc(false) + P"null" * Cc(nil),
}
local v = json:match('{"a": [1, 2, {"b": "x\\ny"}], "c": true, "d": -2.5}')
print(#v.a, v.a[3].b, v.c, v.d)

-- substitution, positions, match-time captures, back references
local vowels = Cs((S"aeiou" / string.upper + 1)^0)
print(vowels:match("hello lpeg world"))
local words = Ct((C(R"az"^1) * Cp() + 1)^0)
print(table.concat(words:match("one two  three"), ","))
local balanced = P{"(" * ((1 - S"()") + V(1))^0 * ")"}
print(balanced:match("(a(b)c)rest"), balanced:match("(a(b c"))
local even = Cmt(C(R"09"^1), function(_, pos, d) return tonumber(d) % 2 == 0 and pos end)
print(even:match("1234"), even:match("123"))
local long = Cmt(P"[" * C(P"="^0) * "[", function(s, i, eq)
  local close = "]" .. eq .. "]"
  local e = s:find(close, i, true)
  return e and e + #close
end)
print(long:match("[==[ text ]] ]==] after"))
print(lpeg.match(lpeg.B"a" * "b", "ab", 2), lpeg.match(P"x" ^ 3, "xx"), lpeg.match(C(P(3)), "abcdef"))
print(lpeg.type(P"a"), lpeg.type(1), lpeg.type(P"a" / 1))
local big = C((R"az" + " ")^0)
local s = string.rep("the quick brown fox ", 5000)
print(#big:match(s))
local ip = R"09"^1 * (P"." * R"09"^1)^3
print(lpeg.match(Ct((C(ip) + 1)^0), "hosts 10.0.0.1 and 192.168.1.254 here")[2])

-- errors
print(pcall(lpeg.match, P"a", 1))
print(pcall(lpeg.P, {}))
print(pcall(function() return P"a" + {} end))
print(pcall(function() return lpeg.match(P{"A", A = V"B"}, "x") end))
print(pcall(function() return lpeg.match(P{"A", A = V"A" * "a"}, "x") end))
print(pcall(lpeg.R, "abc"))
print(pcall(lpeg.match))
