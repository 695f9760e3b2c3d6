#!/usr/bin/env python3
"""Two tandem builds side by side: interleaved runs, median CPU time (user + system) per program.

    python3 bench/ab.py --a /tmp/tandem.before --b build/tandem --runs 5 \\
        bench/programs/closures.lua "bench/suite/raytrace.lua 0.5"

Each argument after the options is one program with its arguments (split like a shell). Runs
alternate A, B, B, A, ... so drift in the host's load hits both alike; CPU time rather than wall
time, since a change to the runtime's own work is what is compared (see
../shared/notes/measuring.md; the program thread's CPU clock moves less with placement than the
wall clock). Prints B/A per program (median and fastest runs) and their geometric mean."""
import argparse
import math
import resource
import shlex
import statistics
import subprocess
import sys


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"ab: {' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="baseline tandem binary")
    ap.add_argument("--b", required=True, help="changed tandem binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--opt", action="append", default=[], help="option passed to both before the program")
    ap.add_argument("programs", nargs="+")
    args = ap.parse_args()
    ratios = []
    for prog in args.programs:
        argv = args.opt + shlex.split(prog)
        ta, tb = [], []
        for i in range(args.runs):
            order = [(args.a, ta), (args.b, tb)]
            for binary, times in (order if i % 2 == 0 else order[::-1]):
                times.append(cpu_seconds([binary] + argv))
        ma, mb = statistics.median(ta), statistics.median(tb)
        ratios.append(mb / ma)
        print(f"{prog:40s} A {ma:7.3f} s  B {mb:7.3f} s  B/A {mb / ma:.3f}  fastest {min(tb) / min(ta):.3f}",
              flush=True)
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"geometric mean B/A {gm:.3f} over {len(ratios)} programs, {args.runs} runs each")


if __name__ == "__main__":
    main()
