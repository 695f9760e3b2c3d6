#!/usr/bin/env python3
"""Random-program differential fuzzer beyond difftest.py: programs whose values change type
while they run (so the JIT's guards fail in compiled code), metamethods (__index,
__newindex, __add, __sub, __unm, __eq, __lt, __le, __call, __concat, __len, __tostring),
deep and tail recursion, stack overflows caught by pcall, coroutines (yields inside loops,
across pcall and metamethods, wrap, dead coroutines, errors inside them), pcall/error/xpcall
with non-string values and levels, string operations and integer/float edge values.

Every program runs under `tandem -Xjit=on`, `tandem -Xjit=off` and lua5.4 (when installed).
The JIT and the interpreter must agree exactly (but for the sign of NaNs); lua5.4 up to
error positions and the sign of a float zero (difftest.py's normalisations). Programs are
deterministic by seed: program N of seed S is always the same text.

    python3 tests/jit/progfuzz.py --tandem build/tandem --programs 40 --seed 7   # ctest
    python3 tests/jit/progfuzz.py --tandem build/tandem --minutes 30 --seed 1    # long run
A failing program is written to the --keep folder (default /tmp) with its outputs.
"""
import os
import random
import re
import shutil
import sys
import time

import tandem_harness as th
from difftest import differential, parser

INTS = ["0", "1", "-1", "2", "7", "-8", "100", "math.maxinteger", "math.mininteger", "(1 << 62)",
        "(2^53 // 1)", "0x7fffffff", "-0x80000000"]
FLOATS = ["0.0", "-0.0", "0.5", "-1.5", "1e308", "1/0", "-1/0", "2^53", "2.0^63", "3.25", "1e-310", "7.0"]
STRINGS = ["'10'", "'0x10'", "' 5 '", "'1e2'", "'abc'", "''", "'3.5'", "'-0'", "'9007199254740993'"]
OTHERS = ["true", "false", "nil", "B(3)", "B(-2.5)", "B('7')", "{}", "{1, 2, 3}", "print"]
ARITH = ["+", "-", "*", "/", "//", "%", "^", "&", "|", "~", "<<", ">>", ".."]
CMP = ["<", "<=", ">", ">=", "==", "~="]

# The prelude: show() prints values without addresses; B is a class with every metamethod.
PRELUDE = r"""
local function fmt(v)
  local t = type(v)
  if t == 'number' then
    if math.type(v) == 'float' then return string.format('%.17g', v) end
    return tostring(v)
  elseif t == 'string' then return string.format('%q', (v:gsub('0x%x%x%x%x+', 'ADDR')))
  elseif t == 'table' then
    if getmetatable(v) and rawget(v, 'v') ~= nil then return 'B(' .. fmt(rawget(v, 'v')) .. ')' end
    return 'table#' .. rawlen(v)
  end
  return t == 'nil' and 'nil' or t == 'boolean' and tostring(v) or t
end
local function plain(v) if type(v) == 'table' then return fmt(v) end return tostring(v) end
local function show(...)
  local n = select('#', ...)
  local t = {}
  for i = 1, n do t[i] = fmt((select(i, ...))) end
  print(table.concat(t, ' '))
end
local function try(label, f, ...)
  show(label, pcall(f, ...))
end
local B = {}
local function val(x) if type(x) == 'table' then return rawget(x, 'v') end return x end
local function mk(v) return setmetatable({v = v}, B) end
B.__add = function(a, b) return mk(val(a) + val(b)) end
B.__sub = function(a, b) return mk(val(a) - val(b)) end
B.__mul = function(a, b) return val(a) * val(b) end
B.__unm = function(a) return mk(-val(a)) end
B.__eq = function(a, b) return val(a) == val(b) end
B.__lt = function(a, b) return val(a) < val(b) end
B.__le = function(a, b) return val(a) <= val(b) end
B.__len = function(a) return val(a) end
B.__concat = function(a, b) return 'B' .. plain(val(a)) .. '|' .. plain(val(b)) end
B.__call = function(self, x, y) return val(self), x, y end
B.__index = function(t, k)
  if k == 'n' then return rawget(t, 'v') end
  if type(k) == 'number' then return val(t) + k end
  return nil
end
B.__newindex = function(t, k, v) rawset(t, 'last', v); rawset(t, 'v', v) end
B.__tostring = function(a) return 'B<' .. plain(val(a)) .. '>' end
local function _B(v) return mk(v) end
"""


class Gen:
    def __init__(self, rnd):
        self.r = rnd
        self.nf = 0

    def value(self):
        r = self.r.random()
        pool = INTS if r < 0.35 else FLOATS if r < 0.6 else STRINGS if r < 0.8 else OTHERS
        return self.r.choice(pool).replace("B(", "_B(")

    def values(self, n):
        """A list literal of mixed values, numbers first (the JIT compiles on the first call
        and sees numbers; later calls bring the types that make its guards fail)."""
        nums = [self.r.choice(INTS + FLOATS) for _ in range(self.r.randint(1, 3))]
        rest = [self.value() for _ in range(n)]
        return "{" + ", ".join(nums + rest) + "}"

    def binexpr(self, a, b):
        op = self.r.choice(ARITH + CMP)
        return "%s %s %s" % (a, op, b)

    # ---- snippets: each returns the lines of one top-level block -------------------------
    def s_typeflip(self):
        """A loop whose accumulator changes type in the middle (int -> float -> string or B)."""
        k = self.r.randint(1, 15)
        op = self.r.choice(["+", "-", "*", "//", "%", "..", "&"])
        flip = self.value()
        return ["do",
                "  local function f(x, n)",
                "    local acc = %s" % self.r.choice(INTS[:7] + FLOATS[:4]),
                "    for i = 1, n do",
                "      if i == %d then acc = %s end" % (k, flip),
                "      acc = acc %s (x or i)" % op,
                "    end",
                "    return acc",
                "  end",
                "  for _, x in ipairs(%s) do try('flip', f, x, 20) end" % self.values(4),
                "end"]

    def s_binop(self):
        """One operation compiled once, then run on operands of every type."""
        op = self.r.choice(ARITH + CMP)
        lines = ["do",
                 "  local function f(a, b) return a %s b end" % op,
                 "  local xs, ys = %s, %s" % (self.values(3), self.values(3)),
                 "  for i = 1, #xs do for j = 1, #ys do try('op%s', f, xs[i], ys[j]) end end" % op.replace("%", "mod"),
                 "end"]
        return lines

    def s_unop(self):
        op = self.r.choice(["-", "~", "#", "not "])
        return ["do",
                "  local function f(a) return %sa end" % op,
                "  for _, x in ipairs(%s) do try('un', f, x) end" % self.values(5),
                "end"]

    def s_meta(self):
        """Metamethods through every kind of access."""
        body = self.r.choice([
            "return o.n, o[3], o.missing",
            "o.x = a; return rawget(o, 'last'), o.n",
            "o[1] = a; return #o",
            "return o(a, 2)",
            "return o .. a, a .. o",
            "return o + a, a - o, -o",
            "return o == _B(a), o < _B(a), o <= _B(a)",
            "return o * a",
            "return tostring(o), #o",
            "local s = 0; for i = 1, 10 do s = s + o[i] end return s",
        ])
        return ["do",
                "  local function f(o, a) %s end" % body,
                "  for _, a in ipairs(%s) do" % self.values(3),
                "    for _, o in ipairs({_B(%s), _B(%s), {v = 1}}) do try('meta', f, o, a) end" % (
                    self.r.choice(INTS[:7]), self.r.choice(FLOATS[:6])),
                "  end",
                "end"]

    def s_index_chain(self):
        """__index chains of tables and functions, deep enough to loop in compiled code."""
        depth = self.r.randint(1, 60)
        return ["do",
                "  local base = {k = %s, [1] = %s}" % (self.value(), self.value()),
                "  local t = base",
                "  for i = 1, %d do t = setmetatable({}, {__index = (i %% 3 == 0) and function(_, k) return t[k] end or t}) end" % depth,
                "  local function f(t, k) return t[k], t.k end",
                "  for _, k in ipairs({'k', 1, 2, 'z'}) do try('chain', f, t, k) end",
                "end"]

    def s_recursion(self):
        n = self.r.choice([10, 100, 1000, 10000, 50000])
        kind = self.r.randint(0, 3)
        if kind == 0:
            body = ["  local function rec(n) if n == 0 then return 0 end return 1 + rec(n - 1) end",
                    "  try('rec', rec, %d)" % n]
        elif kind == 1:
            body = ["  local function tail(n, acc) if n == 0 then return acc end return tail(n - 1, acc + n % 7) end",
                    "  try('tail', tail, %d, 0)" % (n * 10)]
        elif kind == 2:
            body = ["  local function inf(n) return 1 + inf(n + 1) end",
                    "  local ok, e = pcall(inf, 1)",
                    "  show('overflow', ok, type(e) == 'string' and e:find('stack overflow') ~= nil)",
                    "  try('after', function(x) return x * 2 end, %s)" % self.r.choice(INTS[:6])]
        else:
            body = ["  local mut_b",
                    "  local function mut_a(n, x) if n <= 0 then return x end return mut_b(n - 1, x .. '') end",
                    "  mut_b = function(n, x) if n <= 0 then return x end return mut_a(n - 1, (tonumber(x) or 0) + 1) end",
                    "  try('mutual', mut_a, %d, %s)" % (min(n, 5000), self.r.choice(INTS[:5]))]
        return ["do"] + body + ["end"]

    def s_coroutine(self):
        kind = self.r.randint(0, 4)
        n = self.r.randint(1, 12)
        if kind == 0:
            body = ["  local gen = coroutine.wrap(function(a)",
                    "    for i = 1, %d do a = coroutine.yield(a %s i) or a end" % (n, self.r.choice(["+", "*", "..", "-"])),
                    "    return 'done', a",
                    "  end)",
                    "  for _, x in ipairs(%s) do try('wrap', gen, x) end" % self.values(n + 1)]
        elif kind == 1:
            body = ["  local co = coroutine.create(function(...)",
                    "    local s = 0",
                    "    for i = 1, %d do" % n,
                    "      local ok, v = pcall(function() return coroutine.yield(i) + s end)",
                    "      if ok then s = v else s = 'err' end",
                    "    end",
                    "    error({code = s})",
                    "  end)",
                    "  for _, x in ipairs(%s) do" % self.values(n + 2),
                    "    local r = table.pack(coroutine.resume(co, x))",
                    "    if type(r[2]) == 'table' then r[2] = r[2].code end",
                    "    show('co', coroutine.status(co), table.unpack(r, 1, r.n))",
                    "  end"]
        elif kind == 2:
            # a yield inside a metamethod
            body = ["  local M = setmetatable({}, {__add = function(a, b) return coroutine.yield(b) end,",
                    "                                __index = function(t, k) return coroutine.yield(k) end})",
                    "  local co = coroutine.wrap(function(x) local s = M + x; local t = M[s]; return s, t end)",
                    "  show('ymeta', co(%s))" % self.value(),
                    "  show('ymeta', co(%s))" % self.value(),
                    "  show('ymeta', co(%s))" % self.value()]
        elif kind == 3:
            body = ["  local function producer(k) for i = 1, k do coroutine.yield(i * %s) end end" % self.r.choice(INTS[:6] + FLOATS[:4]),
                    "  local total = 0",
                    "  for v in coroutine.wrap(function() producer(%d) end) do total = total + v end" % (n * 50),
                    "  show('gen', total)",
                    "  local co = coroutine.create(producer)",
                    "  for i = 1, %d do show('res', coroutine.resume(co, 2)) end" % (n % 4 + 1),
                    "  show('isy', coroutine.isyieldable(), coroutine.status(co))"]
        else:
            body = ["  local depth = 0",
                    "  local function nest(n)",
                    "    if n == 0 then return coroutine.yield('bottom') end",
                    "    local co = coroutine.wrap(function() depth = depth + 1; return nest(n - 1) end)",
                    "    return co()",
                    "  end",
                    # 90: Tandem counts two C levels per nested wrap (lua5.4 one), so from 99
                    # levels it says "C stack overflow" where lua5.4 goes on to about 195
                    "  try('nest', nest, %d)" % self.r.choice([1, 5, 50, 90]),
                    "  show('depth', depth)"]
        return ["do"] + body + ["end"]

    def s_errors(self):
        ev = self.r.choice(["{code = 42}", "42", "nil", "'plain'", "_B(9)", "3.5", "true",
                            "'msg', 0", "'msg', 1", "'msg', 2", "setmetatable({}, {__tostring = function() return 'TS' end})"])
        kind = self.r.randint(0, 3)
        if kind == 0:
            body = ["  local function f(x) if x then error(%s) end return 'no' end" % ev,
                    "  local function g(x) local r = table.pack(pcall(f, x)) return r.n, r[1], r[2] end",
                    "  for _, x in ipairs({false, true, 1}) do try('err', g, x) end"]
        elif kind == 1:
            body = ["  local function h(e) return 'H:' .. type(e) .. ':' .. (type(e) == 'table' and fmt(rawget(e, 'code') or rawget(e, 'v')) or fmt(e)) end",
                    "  local function f(a, b) return a %s b end" % self.r.choice(ARITH[:-1] + ["<", ".."]),
                    "  for _, a in ipairs(%s) do show('xp', xpcall(f, h, a, %s)) end" % (self.values(3), self.value())]
        elif kind == 2:
            body = ["  local t = setmetatable({}, {__index = function(t, k) error(%s) end})" % ev,
                    "  local function f(i) local s = 0 for j = 1, i do s = s + (t[j] or 0) end return s end",
                    "  show('ierr', pcall(f, %d))" % self.r.randint(0, 3)]
        else:
            body = ["  local function lvl(n) if n == 0 then error(%s) end local ok, e = pcall(lvl, n - 1) error(e, 0) end" % ev,
                    "  show('nested', pcall(lvl, %d))" % self.r.randint(0, 40)]
        return ["do"] + body + ["end"]

    def s_strings(self):
        exprs = [
            "s:rep(%d, ',')" % self.r.randint(0, 3), "s:sub(%d, %d)" % (self.r.randint(-4, 4), self.r.randint(-4, 6)),
            "s:upper() .. s:lower()", "#s", "s:byte(1, -1)", "tonumber(s)", "tonumber(s, 16)",
            "math.tointeger(s)", "s:find('%s', 1, true)" % self.r.choice(["1", "a", "", "."]),
            "string.format('%d', s)", "string.format('%5.2f|%g', s, s)", "string.format('%x', s)",
            "s .. 1 .. 2.0", "s + 0", "s < '5'", "s == 10", "string.char(#s + 65)",
            "s:gsub('%d', '#')", "s:match('^%s*(%-?%d+)')", "select('#', s:byte(1, -1))",
            "string.format('%q', s)", "#fmt(s)", "fmt(s):len()", "s:reverse()",
        ]
        picks = self.r.sample(exprs, 4)
        return ["do",
                "  local function f(s) return %s end" % ", ".join(picks),
                "  for _, s in ipairs(%s) do try('str', f, s) end" % self.values(5),
                "end"]

    def s_numbers(self):
        exprs = ["a // b", "a % b", "a / b", "a ^ b", "math.fmod(a, b)", "a << b", "a >> b",
                 "math.ult(a, b)", "a == b", "a < b", "math.max(a, b)", "math.min(a, b)",
                 "math.tointeger(a)", "math.floor(a)", "math.ceil(b)", "math.abs(a)", "a + b", "a - b", "a * b",
                 "string.format('%.14g', a)", "a // 1 | 0", "math.type(a * b)", "-a"]
        picks = self.r.sample(exprs, 4)
        nums = ", ".join(self.r.choice(INTS + FLOATS) for _ in range(6))
        return ["do",
                "  local function f(a, b) return %s end" % ", ".join(picks),
                "  local xs = {%s}" % nums,
                "  for i = 1, #xs do for j = 1, #xs do try('num', f, xs[i], xs[j]) end end",
                "end"]

    def s_varargs(self):
        return ["do",
                "  local function f(...) local t = table.pack(...) return select('#', ...), t.n, (select(%d, ...)) end" % self.r.choice([1, 2, -1, -2]),
                "  local function g(...) return f(...), f(nil, ...) end",
                "  for _, x in ipairs(%s) do try('va', g, x, x, nil) end" % self.values(3),
                "end"]

    def s_upvalues(self):
        """A closure whose upvalue changes type while compiled code reads it."""
        return ["do",
                "  local u = %s" % self.r.choice(INTS[:7]),
                "  local function f(x) u = u %s x return u end" % self.r.choice(["+", "..", "*", "-"]),
                "  for i, x in ipairs(%s) do if i == %d then u = %s end try('up', f, x) end" % (
                    self.values(5), self.r.randint(1, 6), self.value()),
                "end"]

    SNIPPETS = ["s_typeflip", "s_binop", "s_unop", "s_meta", "s_index_chain", "s_recursion", "s_coroutine",
                "s_errors", "s_strings", "s_numbers", "s_varargs", "s_upvalues"]

    def program(self, nsnippets):
        lines = PRELUDE.strip().split("\n")
        for _ in range(nsnippets):
            lines += getattr(self, self.r.choice(self.SNIPPETS))()
        return "\n".join(lines) + "\n"


def run(cmd, path, timeout):
    """(status, stdout and the first stderr line without the program's name)."""
    r = th.run_once(cmd + [path], timeout=timeout)
    if r.timed_out:
        return "timeout", ""
    err = re.sub(r"^\S*?(lua5\.4|tandem): ", "", r.err.split("\n")[0])
    return r.code, r.out + ("" if r.code == 0 else "\nstderr: " + err)


def main():
    ap = parser(__doc__, 22)
    ap.add_argument("--minutes", type=float, default=0, help="run programs until this much time has passed")
    ap.add_argument("--snippets", type=int, default=10, help="snippets per program")
    args = ap.parse_args()
    args.tandem = th.find_tandem(args.tandem, required=True)
    tmpdir = os.path.join(args.keep, "tandem_progfuzz_%d" % os.getpid())
    os.makedirs(tmpdir, exist_ok=True)
    failures, n, t0 = 0, 0, time.monotonic()
    while (n < args.programs) if not args.minutes else (time.monotonic() - t0 < args.minutes * 60):
        # program n of a seed is the same text whatever ran before it
        src = Gen(random.Random("%d/%d" % (args.seed, n))).program(args.snippets)
        path = os.path.join(tmpdir, "p%d.lua" % n)
        cmds = {"jit": [args.tandem, "-Xjit=on"], "interp": [args.tandem, "-Xjit=off"]}
        if args.lua:
            cmds["lua5.4"] = [args.lua]
        failures += bool(differential(path, src, cmds, args.timeout, run))
        n += 1
    if failures == 0:
        shutil.rmtree(tmpdir, ignore_errors=True)
    print("progfuzz: %d/%d programs agree (seed %d, %.1f min, %s)" %
          (n - failures, n, args.seed, (time.monotonic() - t0) / 60,
           "jit, interpreter and lua5.4" if args.lua else "jit and interpreter"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
