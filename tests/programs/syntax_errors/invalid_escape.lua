-- An escape sequence that does not exist.
local ok = "fine\n"
local bad = "bad \q escape"
