-- The ffi module against libc and libm. Run by run_ffi_tests.py with its own pid as arg[1]
-- (the parent of this process). Prints "ok <name>" or "FAIL <name>: <detail>" per check and
-- a final count; the runner knows how many checks there must be.
local runner_pid = tonumber(arg[1])
local passed, failed = 0, 0

local function check(name, cond, detail)
  if cond then
    passed = passed + 1
    print("ok " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(detail))
  end
end

-- f(...) must raise an error whose message contains [want] (plain substring).
local function fails(name, want, f, ...)
  local ok, err = pcall(f, ...)
  check(name, not ok and string.find(tostring(err), want, 1, true) ~= nil,
        ok and "no error" or ("got: " .. tostring(err)))
end

local function eq(name, got, want)
  check(name, got == want and math.type(got) == math.type(want),
        string.format("got %s (%s), want %s (%s)", tostring(got), math.type(got) or type(got),
                      tostring(want), math.type(want) or type(want)))
end

-- ---- loading ------------------------------------------------------------------------------
check("ffi is a table with load", type(ffi) == "table" and type(ffi.load) == "function", type(ffi))
check("package.loaded.ffi", package.loaded.ffi == ffi, package.loaded.ffi)
local libc = ffi.load("c")
local libm = ffi.load("libm")
check("load returns a library", type(libc) == "userdata", type(libc))
check("library tostring", tostring(libc):find("^ffi%.library: libc%.so%.6 %(0x") ~= nil, tostring(libc))
check("library __name", getmetatable(libc).__name == "ffi.library", getmetatable(libc).__name)
check("libc and libm share the metatable", getmetatable(libc) == getmetatable(libm))

-- ---- int64 / string ---------------------------------------------------------------------------
local strlen = libc:func("strlen", "int64", {"string"})
check("func returns a function", type(strlen) == "function", type(strlen))
eq("strlen('hello')", strlen("hello"), 5)
eq("strlen('')", strlen(""), 0)
eq("strlen stops at an embedded zero", strlen("ab\0cd"), 2)
eq("strlen of a long string", strlen(string.rep("x", 100000)), 100000)

-- ---- double -------------------------------------------------------------------------------
local sqrt = libm:func("sqrt", "double", {"double"})
eq("sqrt(2.0)", sqrt(2.0), math.sqrt(2))
eq("sqrt(16) takes an integer", sqrt(16), 4.0)
local pow = libm:func("pow", "double", {"double", "double"})
eq("pow(2, 10)", pow(2, 10), 1024.0)
eq("pow(2.5, -1)", pow(2.5, -1), 0.4)
local atan2 = libm:func("atan2", "double", {"double", "double"})
eq("atan2(1, -1)", atan2(1, -1), math.atan(1, -1))

-- ---- int ----------------------------------------------------------------------------------
local getpid = libc:func("getpid", "int", {})
local f = assert(io.open("/proc/self/stat"))
local stat_pid = tonumber(f:read("a"):match("^(%d+) "))
f:close()
check("/proc/self/stat readable", stat_pid ~= nil and stat_pid > 0, stat_pid)
eq("getpid() == /proc/self/stat pid", getpid(), stat_pid)
local getppid = libc:func("getppid", "int")  -- argument list omitted: no arguments
eq("getppid() == runner pid", getppid(), runner_pid)
local abs = libc:func("abs", "int", {"int"})
eq("abs(-5)", abs(-5), 5)
eq("abs(-7.0) takes an integral float", abs(-7.0), 7)
eq("abs(-2147483647)", abs(-2147483647), 2147483647)
local toupper = libc:func("toupper", "int", {"int"})
eq("toupper('a')", toupper(string.byte("a")), string.byte("A"))
-- negative int results keep their sign through libffi's widened return word
local atoi = libc:func("atoi", "int", {"string"})
eq("atoi('-42')", atoi("-42"), -42)

-- ---- int64 beyond double precision ------------------------------------------------------------
local llabs = libc:func("llabs", "int64", {"int64"})
eq("llabs(-9007199254740993)", llabs(-9007199254740993), 9007199254740993)
eq("llabs(mininteger + 1)", llabs(math.mininteger + 1), math.maxinteger)
local strtoll = libc:func("strtoll", "int64", {"string", "pointer", "int"})
eq("strtoll('-9223372036854775807', nil, 10)", strtoll("-9223372036854775807", nil, 10), -9223372036854775807)
eq("strtoll('ff', nil, 16)", strtoll("ff", nil, 16), 255)

-- ---- pointers -----------------------------------------------------------------------------
local strchr = libc:func("strchr", "pointer", {"string", "int"})
local s = "hello world"
local p = strchr(s, string.byte("w"))
check("strchr returns a light userdata", type(p) == "userdata" and getmetatable(p) == nil, type(p))
eq("strchr not found is nil", strchr(s, string.byte("z")), nil)
local plen = libc:func("strlen", "int64", {"pointer"})
eq("strlen(pointer from strchr)", plen(p), 5)
eq("strlen(pointer) takes a string's bytes", plen("abc"), 3)
local strchr_s = libc:func("strchr", "string", {"pointer", "int"})
eq("strchr as string result", strchr_s(s, string.byte("o")), "o world")
eq("string result from a pointer argument", strchr_s(p, string.byte("l")), "ld")
eq("string result NULL is nil", strchr_s(s, string.byte("q")), nil)

-- ---- strings, NULL --------------------------------------------------------------------------
local getenv = libc:func("getenv", "string", {"string"})
check("HOME is set", os.getenv("HOME") ~= nil)
eq("getenv('HOME') == os.getenv('HOME')", getenv("HOME"), os.getenv("HOME"))
eq("getenv of an unset variable is nil", getenv("TANDEM_FFI_SURELY_UNSET_VARIABLE"), nil)
local setlocale = libc:func("setlocale", "string", {"int", "string"})
eq("setlocale(LC_ALL, nil) queries (string nil is NULL)", setlocale(6, nil), "C")

-- ---- void ---------------------------------------------------------------------------------
local srand = libc:func("srand", "void", {"int"})
local rand = libc:func("rand", "int", {})
eq("void function returns nothing", select("#", srand(12345)), 0)
local r1, r2 = rand(), rand()
srand(12345)
check("srand reseeds rand", rand() == r1 and rand() == r2, "sequence differs")

-- ---- the process itself ---------------------------------------------------------------------
local self = ffi.load()
check("ffi.load() tostring", tostring(self):find("^ffi%.library: %(process%)") ~= nil, tostring(self))
eq("strlen through the process", self:func("strlen", "int64", {"string"})("abcd"), 4)
eq("ffi.load(nil) works too", ffi.load(nil):func("abs", "int", {"int"})(-3), 3)

-- ---- bound functions survive collections ----------------------------------------------------
local bound = {}
for i = 1, 50 do bound[i] = ffi.load("m"):func("fabs", "double", {"double"}) end
collectgarbage()
collectgarbage()
local sum = 0.0
for i = 1, 50 do sum = sum + bound[i](-i) end
eq("50 bound functions after collections", sum, 1275.0)

-- ---- bad signatures -------------------------------------------------------------------------
fails("unknown result type", "ffi: unknown type 'size_t' for result of 'strlen' (valid types: int, int64, double, string, pointer, void)",
      libc.func, libc, "strlen", "size_t", {"string"})
fails("unknown argument type", "ffi: unknown type 'char*' for argument 2 of 'strchr' (valid types: int, int64, double, string, pointer)",
      libc.func, libc, "strchr", "pointer", {"string", "char*"})
fails("void argument", "ffi: 'void' is not a valid type for argument 1 of 'rand'",
      libc.func, libc, "rand", "int", {"void"})
fails("argument type not a string", "ffi: type of argument 1 of 'abs' must be a type name (a string), got number",
      libc.func, libc, "abs", "int", {1})
fails("missing result type", "ffi: type of result of 'abs' must be a type name (a string), got nil",
      libc.func, libc, "abs")
local many = {}
for i = 1, 17 do many[i] = "int" end
fails("too many arguments", "ffi: 'abs' has 17 arguments; at most 16 are supported", libc.func, libc, "abs", "int", many)
fails("argument list not a table", "bad argument #4 to 'func' (table expected, got string)",
      libc.func, libc, "abs", "int", "int")
fails("func on a non-library", "bad argument #1 to 'func' (ffi.library expected, got table)",
      libc.func, {}, "abs", "int")
fails("method call with a bad name", "bad argument #1 to 'func' (string expected, got number)",
      function() return libc:func(42, "int") end)

-- ---- missing symbols, bad libraries -------------------------------------------------------------
fails("missing symbol", "ffi: symbol 'tandem_no_such_function' not found in 'libc.so.6': ",
      libc.func, libc, "tandem_no_such_function", "int", {})
fails("missing symbol says why", "undefined symbol: tandem_no_such_function",
      libc.func, libc, "tandem_no_such_function", "int", {})
fails("bad library", "ffi.load: cannot open 'libtandem_no_such_lib.so.9': libtandem_no_such_lib.so.9: cannot open shared object file",
      ffi.load, "libtandem_no_such_lib.so.9")
fails("library name with a zero byte", "bad argument #1 to 'ffi.load' (name contains a zero byte)", ffi.load, "c\0x")
fails("symbol name with a zero byte", "bad argument #2 to 'func' (name contains a zero byte)",
      libc.func, libc, "strlen\0x", "int64", {"string"})
fails("library name not a string", "bad argument #1 to 'ffi.load' (string expected, got table)", ffi.load, {})

-- ---- bad calls ----------------------------------------------------------------------------
fails("too few arguments", "bad argument #1 to 'strlen' (string expected, got no value)", strlen)
fails("too few arguments (second)", "bad argument #2 to 'pow' (number expected, got no value)", pow, 2)
fails("too many arguments in a call", "bad argument #2 to 'strlen' (1 argument expected, got 2)", strlen, "a", "b")
fails("too many arguments to a 0-ary", "bad argument #1 to 'getpid' (0 arguments expected, got 1)", getpid, 1)
fails("string for int", "bad argument #1 to 'abs' (number expected, got string)", abs, "5")
fails("non-integral float for int", "bad argument #1 to 'abs' (number has no integer representation)", abs, 1.5)
fails("int out of range", "bad argument #1 to 'abs' (number out of range for C int)", abs, 2147483648)
fails("int below range", "bad argument #1 to 'abs' (number out of range for C int)", abs, -2147483649)
fails("float beyond int64", "bad argument #1 to 'llabs' (number has no integer representation)", llabs, 2^63)
fails("table for double", "bad argument #1 to 'sqrt' (number expected, got table)", sqrt, {})
fails("boolean for double", "bad argument #2 to 'pow' (number expected, got boolean)", pow, 1, true)
fails("number for string", "bad argument #1 to 'strlen' (string expected, got number)", strlen, 5)
fails("table for pointer", "bad argument #1 to 'strlen' (light userdata expected, got table)", plen, {})
fails("local name in call errors", "bad argument #1 to 'abs'",
      function() return abs("x") end)

print(string.format("ffi: %d checks passed", passed))
if failed > 0 then
  error(string.format("%d ffi checks failed", failed))
end
