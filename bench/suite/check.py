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
import pathlib
import sys
import time

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

HERE = os.path.dirname(os.path.abspath(__file__))


def programs(names):
    found = sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".lua"))
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            sys.exit("check.py: no such program: " + ", ".join(missing))
        found = [n for n in found if n in names]
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--lua", default="lua5.4")
    ap.add_argument("--scale", default="0.1")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("names", nargs="*", help="programs to check (default: all)")
    args = ap.parse_args()

    tandem = os.path.abspath(args.tandem)
    if not os.access(tandem, os.X_OK):
        sys.exit("check.py: tandem binary not found: " + tandem)
    lua = th.find_lua(args.lua)
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
            r = th.run_once(cmd, cwd=th.REPO, timeout=args.timeout)
            rc, out, err = r.code, r.out, "timed out after %ss" % args.timeout if r.timed_out else r.err
            results.append((label, rc, out, err, r.seconds))
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
