-- Comparison operators across subtypes and types.
print(1 < 2, 1 <= 1, 2 > 1, 2 >= 3, 1 == 1, 1 ~= 1)
print(1 < 1.5, 1.5 < 2, -0.0 == 0.0, 0.0 == -0)
print(math.maxinteger < math.huge, math.mininteger > -math.huge)
print(math.maxinteger + 0.0 > math.maxinteger, math.maxinteger + 0.0 == math.maxinteger)
print(2^63 > math.maxinteger, -2^63 >= math.mininteger, -2^63 == math.mininteger)
local nan = 0 / 0
print(nan == nan, nan ~= nan, nan < 1, nan > 1, nan <= nan, 1 < nan)
print("a" < "b", "abc" < "abd", "abc" < "ab", "" == "", "a\0b" < "a\0c")
print("B" < "a", "10" < "9", "ab" <= "ab")
local t1, t2 = {}, {}
print(t1 == t2, t1 == t1, t1 ~= t2)
print(nil == false, false == false, "1" == 1)
print(pcall(function() return {} < {} end))
print(pcall(function() return 1 < "2" end))
print(pcall(function() return nil < 1 end))
print(pcall(function() return true <= false end))
-- not / and / or results
print(not nil, not false, not 0, not "")
print(nil and 1, false and 1, 0 and 1, 1 and nil)
print(nil or "d", false or nil, 0 or 1, "x" or error("not evaluated"))
print(1 and 2 or 3, nil and 2 or 3, 1 and false or 3)
