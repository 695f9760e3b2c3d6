-- os.clock, os.time, os.date, os.difftime, os.getenv: types and properties.
local c1 = os.clock()
print("clock type", math.type(c1))
local x = 0
for i = 1, 200000 do x = x + i % 7 end
local c2 = os.clock()
print("clock monotonic", c2 >= c1, x)
local t = os.time()
print("time type", math.type(t), t > 1600000000)
-- the local-time table form is timezone-dependent: print only the type
print("time{} type", math.type(os.time{year = 2020, month = 1, day = 1, hour = 12}))
-- differences between two local times do not depend on the zone
local a = os.time{year = 2021, month = 7, day = 10, hour = 12}
local b = os.time{year = 2021, month = 7, day = 11, hour = 12}
print("one day", b - a, os.difftime(b, a), math.type(os.difftime(b, a)))
-- fields are normalised: month 13 is January of the next year
local n1 = os.time{year = 2020, month = 13, day = 1, hour = 12}
local n2 = os.time{year = 2021, month = 1, day = 1, hour = 12}
print("normalised", n1 == n2)
-- UTC formatting with "!" is deterministic
print(os.date("!%Y-%m-%d %H:%M:%S", 0))
print(os.date("!%Y-%m-%d %H:%M:%S", 86400 * 365 + 3661))
local d = os.date("!*t", 1000000000)
print(d.year, d.month, d.day, d.hour, d.min, d.sec, d.wday, d.yday, d.isdst)
print(os.date("!%A %B %j", 1000000000))
print(type(os.date()), type(os.date("%c")))
print(pcall(os.time, {year = 2020}))
-- os.getenv
-- (the runner makes sure HOME is set and sets TANDEM_TEST_ENV)
print("HOME type", type(os.getenv("HOME")))
print("TANDEM_TEST_ENV", os.getenv("TANDEM_TEST_ENV"))
print("unset var", os.getenv("TANDEM_SURELY_UNSET_VARIABLE_12345"))
print(pcall(os.getenv))
-- os.tmpname gives a string; os.remove/os.rename on a fresh file
local name = os.tmpname()
print("tmpname type", type(name))
local f = assert(io.open(name, "w"))
f:write("x")
f:close()
local renamed = name .. ".renamed"
print("rename", os.rename(name, renamed))
print("remove", os.remove(renamed))
local ok, msg = os.remove(renamed)
print("remove again", ok, type(msg))
