#!/usr/bin/env python3
"""The C API's speed targets, side by side with lua5.4 (bench/capi/README.md).

Runs ccall.lua and cjson_decode.lua under lua5.4, tandem (interpreter) and tandem -Xjit=on,
interleaved run by run (lua5.4, tandem, tandem-jit, lua5.4, ...), each run's checksum equal
to lua5.4's; prints the median of each timed section ("elapsed...:" lines, measured inside
the program, so start-up and module loading are left out) with [min, max], and the ratios of
the medians to lua5.4 against the targets: a call into a trivial C function at most 1.5x,
cjson decoding at most 1.2x. Exit 1 when a run fails or differs.

  PYTHONPATH=pylib python3 bench/capi/run_capi_bench.py --tandem build/tandem \\
      --modules build/tests/capi [--runs 7]
"""
import argparse
import os
import re
import statistics
import sys

from tandem_harness import find_lua, run_once

TARGETS = {"ccall.lua": ("elapsed_noop", 1.5), "cjson_decode.lua": ("elapsed", 1.2)}
TIMED = re.compile(r"^(elapsed\w*): ([0-9.]+)$", re.M)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--modules", required=True, help="folder holding capitest.so")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    lua = find_lua()
    if lua is None:
        raise SystemExit("run_capi_bench.py: lua5.4 is needed")
    env = dict(os.environ)
    env["LUA_CPATH_5_4"] = os.path.join(os.path.abspath(a.modules), "?.so") + ";;"
    impls = [("lua5.4", [lua]), ("tandem", [os.path.abspath(a.tandem), "-Xjit=off"]),
             ("tandem-jit", [os.path.abspath(a.tandem), "-Xjit=on"])]
    bad = False
    for prog in sorted(TARGETS):
        path = os.path.join(here, prog)
        times = {name: {} for name, _ in impls}
        want = None
        for _ in range(a.runs):
            for name, argv in impls:
                r = run_once([*argv, path], env=env, timeout=300)
                out = r.out
                result = TIMED.sub("", out).strip()
                if r.code != 0 or (want is not None and result != want):
                    print("%s %s: run failed or differs (exit %d)\n%s%s" % (prog, name, r.code, out, r.err))
                    bad = True
                    continue
                want = want if want is not None else result
                for key, val in TIMED.findall(out):
                    times[name].setdefault(key, []).append(float(val))
        print("%s (%d runs each, medians of in-program times, seconds)" % (prog, a.runs))
        keys = sorted(times["lua5.4"])
        for key in keys:
            base = statistics.median(times["lua5.4"][key])
            row = []
            for name, _ in impls:
                v = times[name].get(key, [])
                if not v:
                    row.append("%s -" % name)
                    continue
                m = statistics.median(v)
                row.append("%s %.3f [%.3f,%.3f] x%.2f" % (name, m, min(v), max(v), m / base))
            print("  %-13s %s" % (key, "   ".join(row)))
        key, limit = TARGETS[prog]
        for name, _ in impls[1:]:
            v = times[name].get(key)
            if v:
                ratio = statistics.median(v) / statistics.median(times["lua5.4"][key])
                print("  target %s/lua5.4 %s <= %.1f: %.2f %s" % (name, key, limit, ratio,
                                                                   "met" if ratio <= limit else "MISSED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
