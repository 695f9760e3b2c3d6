#!/usr/bin/env python3
"""What sampled instrumentation (-Xsample.mode=code, vm/prof/vm_sample.h) costs the program's
own thread, against no profiling and exhaustive concurrent profiling, in instructions counted by
valgrind --tool=callgrind (they repeat exactly; wall-clock times on this machine do not:
/work/shared/notes/measuring.md).

callgrind --separate-threads=yes writes one count per thread; only the program's thread (the
first) is counted, so the analyzer's work on its own core is left out: the figure is what the
application's core pays. For each program and analysis:

  none         no profiling
  exhaustive   -Xprofile=ANALYSIS (concurrent, the default)
  compiled     -Xsample.mode=code -Xsample.rate=RATE: windows run the instrumented twins
  interpreted  the same with -Xsample.windows=interpreted: windows run the instrumented
               interpreter (the design before compiled windows)

and the ratio of overheads (sampled - none) / (exhaustive - none), the issue's measure
(target at 5%: at most 0.45).

    python3 bench/sample_code_cost.py --tandem build/tandem [--scale 0.05] [--rate 0.05]
                                      [--analysis callgraph --analysis pathprof] [--only richards ...]
                                      [--no-interpreted] [--sample-opt -Xsample.twin=64 ...] [--no-gc]

--no-interpreted leaves the interpreted windows out (half the runs); --sample-opt adds an
option to the sampled runs (both kinds), e.g. to compare -Xsample.twin values.

--no-gc runs every configuration with GC_DONT_GC=1 (Boehm's own switch: no collection at
all). Profiling moves the points where collections happen (the heap grows differently), and
on an allocating program the collector's share of the program's thread differs between
configurations by more than the profiling costs: json at scale 0.1, no profiling 1128.0 M
instructions of which libgc 157.8 M, exhaustive callgraph 1130.8 M of which libgc 134.5 M, so
the overhead reads +0.3% with collections and +2.7% without (2026-11-26). The collector's work
is not what profiling costs, so its issue-17 figures are taken with --no-gc; the runs then keep
everything they allocate (json at scale 0.25: a few hundred MB under valgrind).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = ["richards", "havlak", "json", "raytrace"]
ANALYSES = ["callgraph", "pathprof"]


def count(binary, opts, prog, scale, env=None):
    """Instructions of the program's thread (callgrind's first thread file)."""
    with tempfile.TemporaryDirectory(prefix="tandem_cg_") as d:
        out = os.path.join(d, "cg.out")
        argv = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, binary,
                "-Xprofile.out=" + os.path.join(d, "p.txt"), *opts,
                os.path.join(HERE, "suite", prog + ".lua"), str(scale)]
        r = subprocess.run(argv, capture_output=True, text=True, env=env)
        files = sorted(glob.glob(out + "-*"))
        if r.returncode != 0 or not files:
            sys.exit(f"{' '.join(argv)}: failed\n{r.stderr[-800:]}")
        with open(files[0], encoding="utf-8", errors="replace") as f:
            text = f.read()
        m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
        if m is None:
            sys.exit(f"{files[0]}: no summary line")
        return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--scale", default="0.05")
    ap.add_argument("--rate", default="0.05")
    ap.add_argument("--analysis", action="append")
    ap.add_argument("--only", action="append")
    ap.add_argument("--no-interpreted", action="store_true")
    ap.add_argument("--sample-opt", action="append", default=[])
    ap.add_argument("--no-gc", action="store_true", help="GC_DONT_GC=1: no collections (see above)")
    a = ap.parse_args()
    env = dict(os.environ, GC_DONT_GC="1") if a.no_gc else None
    sample = ["-Xsample.mode=code", "-Xsample.rate=" + a.rate, "-Xsample.seed=1", *a.sample_opt]
    print(f"instructions of the program's thread (callgrind), scale {a.scale}, rate {a.rate}"
          + (", no collections (GC_DONT_GC=1)" if a.no_gc else ""))
    for prog in a.only or PROGRAMS:
        none = count(a.tandem, [], prog, a.scale, env)
        print(f"{prog}: none {none}", flush=True)
        for an in a.analysis or ANALYSES:
            p = ["-Xprofile=" + an]
            ex = count(a.tandem, p, prog, a.scale, env)
            comp = count(a.tandem, p + sample, prog, a.scale, env)
            ovh = ex - none

            def ratio(x):
                return (x - none) / ovh if ovh > 0 else float("nan")
            line = (f"  {an}: exhaustive {ex} (+{100.0 * ovh / none:.1f}%)  compiled {comp} (+{100.0 * (comp - none) / none:.1f}%,"
                    f" {ratio(comp):.2f}x)")
            if not a.no_interpreted:
                opts = p + [o for o in sample if not o.startswith("-Xsample.twin")] + ["-Xsample.windows=interpreted"]
                interp = count(a.tandem, opts, prog, a.scale, env)
                line += f"  interpreted {interp} (+{100.0 * (interp - none) / none:.1f}%, {ratio(interp):.2f}x)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
