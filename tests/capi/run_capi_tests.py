#!/usr/bin/env python3
"""C modules under tandem against lua5.4 (tests/capi/README.md).

Every <name>.lua here runs under lua5.4 once and under tandem in each configuration of
CONFIGS (plain, -Xgc.stress, green threads on one and two carriers, the JIT, a concurrent
call-graph profile written away): stdout, stderr
and the exit status must equal lua5.4's, with addresses ("0x...") and the program name
before an uncaught error's message written alike. lua5.4 must exit 0 unless a <name>.fails
file says the program ends with an error on purpose. A program with a
<name>.expected file (the thread programs: lua5.4 has no thread library) is compared with
that file instead. Each run has a fresh temporary directory as its working directory and
package.cpath starting with the build's folder of test modules (capitest.so), then Debian's.
"""
import argparse
import glob
import os
import re
import sys
import tempfile

from tandem_harness import extra_args, find_lua, run_once

CONFIGS = [
    [],
    ["-Xgc.stress=7"],
    ["-Xthreads=green", "-Xcarriers=1"],
    ["-Xthreads=green", "-Xcarriers=2", "-Xgc.stress=50"],
    ["-Xjit=on"],
    ["-Xprofile=callgraph", "-Xprofile.out=/dev/null"],
]
ADDR = re.compile(r"0x[0-9a-f]+")
DEBIAN_CPATH = ("/usr/local/lib/lua/5.4/?.so;/usr/lib/x86_64-linux-gnu/lua/5.4/?.so;"
                "/usr/lib/lua/5.4/?.so;/usr/local/lib/lua/5.4/loadall.so;./?.so")


PROGNAME = re.compile(r"^\S*(lua5\.4|tandem): ", re.M)


def normal(b):
    if isinstance(b, bytes):
        b = b.decode(errors="replace")
    return PROGNAME.sub("LUA: ", ADDR.sub("ADDR", b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--modules", required=True, help="folder holding capitest.so")
    ap.add_argument("--lua5.4", dest="lua", default=None)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("programs", nargs="*")
    a = ap.parse_args()
    a.tandem = os.path.abspath(a.tandem)
    here = os.path.dirname(os.path.abspath(__file__))
    lua = a.lua or find_lua()
    env = dict(os.environ)
    env.pop("LUA_CPATH", None)
    env["LUA_CPATH_5_4"] = os.path.join(os.path.abspath(a.modules), "?.so") + ";" + DEBIAN_CPATH
    programs = [os.path.abspath(p) for p in a.programs] or sorted(glob.glob(os.path.join(here, "*.lua")))
    failures = 0
    for prog in programs:
        name = os.path.basename(prog)
        exp_file = prog[:-4] + ".expected"
        if os.path.exists(exp_file):
            with open(exp_file) as f:
                want = (0, f.read(), "")
        elif lua:
            with tempfile.TemporaryDirectory() as tmp:
                r = run_once([lua, prog], cwd=tmp, env=env, timeout=a.timeout)
            want = (r.code, normal(r.out), normal(r.err))
            if r.code != 0 and not os.path.exists(prog[:-4] + ".fails"):
                failures += 1
                print("FAIL %s: lua5.4 itself exits %d (a program meant to fail has a .fails file)\n%s"
                      % (name, r.code, normal(r.err)[-1000:]))
                continue
        else:
            print("SKIP %s (no lua5.4)" % name)
            continue
        for cfg in CONFIGS:
            with tempfile.TemporaryDirectory() as tmp:
                r = run_once([a.tandem, *extra_args(), *cfg, prog], cwd=tmp, env=env, timeout=a.timeout)
            got = (r.code, normal(r.out), normal(r.err))
            label = "%s %s (%.1f s)" % (name, " ".join(cfg) or "(plain)", r.seconds)
            if got == want:
                print("ok   " + label)
                continue
            failures += 1
            print("FAIL " + label)
            print("  exit %s, lua5.4/expected %s" % (got[0], want[0]))
            wl = (want[1] + "--- stderr\n" + want[2]).splitlines()
            gl = (got[1] + "--- stderr\n" + got[2]).splitlines()
            for i in range(max(len(wl), len(gl))):
                w = wl[i] if i < len(wl) else "<none>"
                g = gl[i] if i < len(gl) else "<none>"
                if w != g:
                    print("  line %d\n    want: %s\n    got:  %s" % (i + 1, w, g))
                    break
            if r.err:
                print("  stderr: " + normal(r.err)[-2000:])
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
