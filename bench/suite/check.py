#!/usr/bin/env python3
"""Run every benchmark of bench/suite at a small scale and compare outputs.

Single-threaded programs (every NAME.lua not starting with "mt_") run under
Tandem and under the reference Lua 5.4; their standard output must be
identical. Multi-threaded programs (mt_*.lua) run under Tandem with
-Xthreads=native and with -Xthreads=green; the two outputs must be identical.
Every run must exit with status 0 (the programs check their own results and
call error() on a mismatch).

Usage: python3 bench/suite/check.py --tandem build/tandem [--scale 0.1]
       [--lua lua5.4] [--timeout 60] [-v] [NAME ...]
Exit status: 0 if everything matched, 1 otherwise.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def programs(names):
    found = sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".lua"))
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            sys.exit("check.py: no such program: " + ", ".join(missing))
        found = [n for n in found if n in names]
    return found


def run(cmd, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, cwd=REPO)
        return p.returncode, p.stdout.decode("utf-8", "replace"), \
            p.stderr.decode("utf-8", "replace"), time.monotonic() - start
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ss" % timeout, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", default=os.path.join(REPO, "build", "tandem"))
    ap.add_argument("--lua", default="lua5.4")
    ap.add_argument("--scale", default="0.1")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("names", nargs="*", help="programs to check (default: all)")
    args = ap.parse_args()

    tandem = os.path.abspath(args.tandem)
    if not os.access(tandem, os.X_OK):
        sys.exit("check.py: tandem binary not found: " + tandem)
    lua = shutil.which(args.lua)
    if not lua:
        sys.exit("check.py: reference interpreter not found: " + args.lua)

    failures = []
    t0 = time.monotonic()
    for name in programs(args.names):
        path = os.path.join(HERE, name + ".lua")
        if name.startswith("mt_"):
            runs = [("native", [tandem, "-Xthreads=native", path, args.scale]),
                    ("green", [tandem, "-Xthreads=green", path, args.scale])]
        else:
            runs = [("tandem", [tandem, path, args.scale]),
                    ("lua5.4", [lua, path, args.scale])]
        results = []
        ok = True
        for label, cmd in runs:
            rc, out, err, secs = run(cmd, args.timeout)
            results.append((label, rc, out, err, secs))
            if rc != 0:
                ok = False
                failures.append("%s [%s]: exit %s\n%s" % (name, label, rc, err.strip()))
        if ok and results[0][2] != results[1][2]:
            ok = False
            failures.append("%s: output differs\n  %s: %s\n  %s: %s" % (
                name, results[0][0], results[0][2].strip(), results[1][0], results[1][2].strip()))
        if ok and not results[0][2].strip():
            ok = False
            failures.append("%s: printed nothing" % name)
        times = "  ".join("%s %.2fs" % (r[0], r[4]) for r in results)
        print("%-4s %-18s %s" % ("ok" if ok else "FAIL", name, times))
        if args.verbose and ok:
            print("     " + results[0][2].strip().replace("\n", "\n     "))
        sys.stdout.flush()

    print("total %.1fs" % (time.monotonic() - t0))
    if failures:
        print("\n%d failure(s):" % len(failures))
        for f in failures:
            print("- " + f)
        return 1
    print("all outputs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
