#!/usr/bin/env python3
"""Random-program differential test of the JIT: generate small Lua programs (integer and
float arithmetic on edge values, comparisons with registers, constants and immediates,
numeric for loops, while/repeat loops, branches, upvalues, table reads and writes with
integer, float, NaN and nil keys, fields), run each under
`tandem -Xjit=on`, `tandem -Xjit=off` and lua5.4 (when installed), and require identical
output and exit status.

The test suite runs it with a fixed seed (ctest: jit_difftest); a longer run by hand:
    python3 tests/jit/difftest.py --tandem build/tandem --programs 500 --seed $RANDOM [--jobs 2]
A failing program is written to the --keep folder (default /tmp) with its three outputs.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import sys

import tandem_harness as th

INT_EDGES = ["0", "1", "-1", "2", "3", "7", "-8", "100", "math.maxinteger", "math.mininteger",
             "(math.maxinteger - 1)", "(math.mininteger + 1)", "2^53 // 1", "-(2^53 // 1)",
             "0x7fffffff", "-0x80000000", "32767", "-32768", "65536"]
FLOAT_EDGES = ["0.0", "-0.0", "0.5", "-1.5", "1e308", "-1e308", "1/0", "-1/0", "0/0", "2^53",
               "2.0^63", "-2.0^63", "1e-310", "3.25", "100.0", "-7.0"]
IMMS = ["0", "1", "-1", "2", "5", "-3", "127", "-128", "32767", "-32768", "1000"]
KFLOATS = ["0.5", "2.0", "-1.25", "1e10", "0.0"]
BINOPS = ["+", "-", "*", "/", "+", "-", "*", "&", "|", "~", "//", "%"]
CMPOPS = ["<", "<=", ">", ">=", "==", "~="]


class Gen:
    def __init__(self, rnd):
        self.r = rnd

    def value(self):
        r = self.r.random()
        if r < 0.5:
            return self.r.choice(INT_EDGES)
        if r < 0.9:
            return self.r.choice(FLOAT_EDGES)
        return self.r.choice(["true", "false", "nil", "'12'", "'x'"])

    def operand(self, vars_):
        r = self.r.random()
        if r < 0.6:
            return self.r.choice(vars_)
        if r < 0.85:
            return self.r.choice(IMMS)
        return self.r.choice(KFLOATS + ["math.maxinteger", "(1 << 40)"])

    def expr(self, vars_, depth=0):
        r = self.r.random()
        if depth < 1 and r < 0.25:
            return "(%s %s %s)" % (self.expr(vars_, depth + 1), self.r.choice(BINOPS), self.operand(vars_))
        if r < 0.35:
            return "-" + self.r.choice(vars_)
        if r < 0.4:
            return "not " + self.r.choice(vars_)
        if r < 0.45:
            return "(%s %s %s)" % (self.r.choice(vars_), self.r.choice(CMPOPS), self.operand(vars_))
        if r < 0.5:
            return "(%s and %s or %s)" % (self.r.choice(vars_), self.operand(vars_), self.operand(vars_))
        return "%s %s %s" % (self.operand(vars_), self.r.choice(BINOPS), self.operand(vars_))

    def cond(self, vars_):
        r = self.r.random()
        if r < 0.8:
            return "%s %s %s" % (self.r.choice(vars_), self.r.choice(CMPOPS), self.operand(vars_))
        if r < 0.9:
            return self.r.choice(vars_)
        return "not " + self.r.choice(vars_)

    def stmts(self, vars_, depth, n):
        out = []
        for _ in range(n):
            r = self.r.random()
            ind = "  " * (depth + 1)
            if depth < 3 and r < 0.15:
                a, b = self.r.choice([("1", "10"), ("-3", "3"), ("5", "1"), ("0", "0"), ("1", "40")])
                st = self.r.choice(["", ", 2", ", -1", ", 3"])
                out.append("%sfor i%d = %s, %s%s do" % (ind, depth, a, b, st))
                out += self.stmts(vars_ + ["i%d" % depth], depth + 1, self.r.randint(1, 4))
                out.append("%send" % ind)
            elif depth < 3 and r < 0.3:
                out.append("%sif %s then" % (ind, self.cond(vars_)))
                out += self.stmts(vars_, depth + 1, self.r.randint(1, 3))
                if self.r.random() < 0.5:
                    out.append("%selse" % ind)
                    out += self.stmts(vars_, depth + 1, self.r.randint(1, 3))
                out.append("%send" % ind)
            elif depth < 2 and r < 0.37:
                out.append("%sdo local n = 0" % ind)
                out.append("%s  while n < %d and %s do" % (ind, self.r.randint(1, 12), self.cond(vars_)))
                out.append("%s    n = n + 1" % ind)
                out += self.stmts(vars_, depth + 2, self.r.randint(1, 3))
                out.append("%s  end end" % ind)
            elif depth < 2 and r < 0.42:
                out.append("%sdo local n = %d" % (ind, self.r.randint(0, 9)))
                out.append("%s  repeat n = n - 1" % ind)
                out += self.stmts(vars_, depth + 2, self.r.randint(1, 2))
                out.append("%s  until n <= 0 end" % ind)
            elif r < 0.45:
                key = self.r.choice(["1", "2", "3", "4", "0", "-1"] + vars_)
                if self.r.random() < 0.5:
                    out.append("%st[%s] = %s" % (ind, key, self.expr(vars_)))
                else:
                    out.append("%s%s = t[%s] or %s" % (ind, self.r.choice(["x", "y", "z", "w"]), key,
                                                        self.operand(vars_)))
            elif r < 0.48:
                f = self.r.choice(["f", "g"])
                if self.r.random() < 0.5:
                    out.append("%so.%s = %s" % (ind, f, self.expr(vars_)))
                else:
                    out.append("%s%s = o.%s or %s" % (ind, self.r.choice(["x", "y", "z", "w"]), f,
                                                       self.operand(vars_)))
            elif r < 0.5:
                out.append("%sacc = acc + (%s and 1 or 0)" % (ind, self.cond(vars_)))
            elif r < 0.55:
                out.append("%sup = %s" % (ind, self.expr(vars_)))
            else:
                v = self.r.choice(["x", "y", "z", "w"])
                out.append("%s%s = %s" % (ind, v, self.expr(vars_ + ["up"])))
        return out

    def program(self, nfuncs):
        lines = ["local up = 0", "local results = {}",
                 "local function show(...) local t = table.pack(...) for i = 1, t.n do "
                 "local v = t[i] if math.type(v) == 'float' then t[i] = string.format('%.17g', v) "
                 "else t[i] = tostring(v) end end print(table.concat(t, ' ')) end"]
        for f in range(nfuncs):
            lines.append("local function f%d(a, b, c)" % f)
            lines.append("  local x, y, z, w, acc = a, b, c, %s, 0" % self.value())
            lines.append("  local t = {%s, %s, %s}" % (self.value(), self.value(), self.value()))
            lines.append("  local o = {f = %s}" % self.value())
            lines += self.stmts(["x", "y", "z", "w", "acc"], 0, self.r.randint(2, 6))
            lines.append("  return x, y, z, w, acc, up, t[1], t[2], t[3], t[4], o.f, o.g")
            lines.append("end")
            for _ in range(2):
                lines.append("show(%d, pcall(f%d, %s, %s, %s))" % (f, f, self.value(), self.value(), self.value()))
        return "\n".join(lines) + "\n"


def nan_sign(result):
    """Lua leaves the sign of a NaN unspecified and x86 propagates the first operand's NaN:
    when both operands of + or * are NaNs of different signs, the result's sign depends on
    the operand order the C compiler (interpreter) or the template (JIT) chose."""
    return result[0], result[1].replace("-nan", "nan")


def normalize(result):
    """lua5.4 gives some errors in multi-line statements other lines, some arithmetic errors
    inside for loops no position at all, and compiles `x - 0` as `x + -0` (so -0.0 - 0 is
    0.0 there, -0.0 in Tandem): positions and the sign of zero are not compared with it."""
    out = re.sub(r"[^\s\"']+\.lua:\d+: ", "", result[1])  # also inside a %q string
    out = re.sub(r"(?<![\w.])-0(?![\w.])", "0", out)
    return result[0], out


NOT_COMPILED = []


def run(cmd, path, timeout):
    r = th.run_once(cmd + [path], timeout=timeout)
    if r.timed_out:
        return "timeout", ""
    if "-Xdump=jit" in cmd:
        # every generated function must compile (a template Zydis cannot encode would
        # otherwise leave it interpreted and this test would check nothing)
        NOT_COMPILED.extend(l for l in r.err.splitlines() if "not compiled" in l)
    return r.code, r.out


def disagree(outs):
    """The runs of [outs] ({name: (status, output)}) that differ from "interp": the JIT
    exactly but for the sign of NaNs (see nan_sign); lua5.4 also up to error positions and
    the sign of a float zero (see normalize)."""
    ref = nan_sign(outs["interp"])
    bad = [k for k, v in outs.items() if k != "lua5.4" and nan_sign(v) != ref]
    if "lua5.4" in outs and normalize(nan_sign(outs["lua5.4"])) != normalize(ref):
        bad.append("lua5.4")
    return bad


def differential(path, src, cmds, timeout, run_one=None):
    """Write the program [src] to [path], run it under each of [cmds] ({name: argv}; "interp"
    is the reference) with [run_one] (default run) and return the names that disagree. A
    failing program stays with its outputs beside it (PATH.NAME.out); a passing one is
    removed."""
    with open(path, "w") as f:
        f.write(src)
    outs = {k: (run_one or run)(cmd, path, timeout) for k, cmd in cmds.items()}
    bad = disagree(outs)
    if bad:
        for k, v in outs.items():
            with open(path + "." + k + ".out", "w") as f:
                f.write("status %s\n%s" % (v[0], v[1]))
        print("FAIL %s: %s differ from the interpreter (outputs kept beside it)" % (path, ", ".join(bad)))
        sys.stdout.flush()
    else:
        os.remove(path)
    return bad


def parser(doc, seed):
    """The options both random testers take (difftest.py, progfuzz.py)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--lua5.4", dest="lua", default=th.find_lua("lua5.4") or "")
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--keep", default="/tmp")
    ap.add_argument("--timeout", type=float, default=60)
    return ap


def main():
    ap = parser(__doc__, 20261123)
    ap.add_argument("--funcs", type=int, default=12, help="functions per program")
    ap.add_argument("--jobs", type=int, default=1, help="programs run at once")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    tmpdir = os.path.join(args.keep, "tandem_jit_difftest_%d" % os.getpid())
    os.makedirs(tmpdir, exist_ok=True)
    cmds = {"jit": [args.tandem, "-Xdump=jit"], "interp": [args.tandem, "-Xjit=off"]}
    if args.lua:
        cmds["lua5.4"] = [args.lua]

    def one(n, src):
        return bool(differential(os.path.join(tmpdir, "p%d.lua" % n), src, cmds, args.timeout))
    # every source is generated here, in order, so that a seed names the same programs
    # whatever --jobs is; the runs (subprocesses) overlap
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = [pool.submit(one, n, Gen(rnd).program(args.funcs)) for n in range(args.programs)]
        failures = sum(f.result() for f in futs)
    for l in NOT_COMPILED[:10]:
        print("NOT COMPILED: " + l)
    if NOT_COMPILED:
        failures += 1
    if failures == 0:
        shutil.rmtree(tmpdir, ignore_errors=True)
    print("jit difftest: %d/%d programs agree (seed %d, %s)" %
          (args.programs - failures, args.programs, args.seed,
           "jit, interpreter and lua5.4" if args.lua else "jit and interpreter"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
