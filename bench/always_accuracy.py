#!/usr/bin/env python3
"""How accurate the always-on preset is over a long run (issue 17: weighted error at most 5%
over a 10 s run). For each program of bench/suite:

  1. one uninstrumented run at scale 1, timed, to pick the scale at which the program runs
     about --seconds (default 10) uninstrumented;
  2. at that scale, the exhaustive profile (-Xprofile=callgraph,calltree, concurrent), the
     oracle;
  3. at that scale, -Xprofile.always (the same analyses by sampled code at 0.2%, adaptive),
     whose JSON report carries the fraction of the run it sampled;

and the three measures of profilers/tools/prof_error.py for each analysis: the weighted
error, the hot-item overlap and the paper's error rate. The programs are deterministic (their
own PRNG), so both runs make the same calls. The always-on run's seed is fixed (--seed), so a
run can be repeated.

    python3 bench/always_accuracy.py --tandem build/tandem [--seconds 10 | --scale S] [--only json ...]
                                     [--seed N] [--always-opt -Xsample.window=256 ...]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

SUITE = os.path.join(th.REPO, "bench", "suite")
PROGRAMS = ["interp", "json", "richards", "havlak"]  # bench/eval's fig. 11 set
ANALYSES = ["callgraph", "calltree"]


def run(argv, what):
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, cwd=SUITE)
    if r.returncode != 0:
        sys.exit("%s failed (%s): %s" % (what, " ".join(argv), r.stderr[-800:]))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description="Accuracy of -Xprofile.always over a long run.")
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="uninstrumented run time to scale each program to (default 10)")
    ap.add_argument("--only", action="append", default=[], help="a program of bench/suite (repeatable)")
    ap.add_argument("--scale", type=float,
                    help="run every program at this scale instead of timing it (a loaded machine's timing"
                         " picks a smaller scale, and the error measured then is not a 10 s run's)")
    ap.add_argument("--seed", type=int, default=1, help="-Xsample.seed of the always-on runs (default 1)")
    ap.add_argument("--always-opt", action="append", default=[],
                    help="an option added to the always-on runs, e.g. -Xsample.window=256 (repeatable)")
    o = ap.parse_args()
    tandem = th.find_tandem(o.tandem)
    if not tandem:
        sys.exit("always_accuracy: no tandem binary at %s" % o.tandem)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tandem_always_") as d:
        for prog in o.only or PROGRAMS:
            src = prog + ".lua"
            if o.scale:
                scale = o.scale
            else:
                t1 = run([tandem, src, "1"], prog)
                scale = max(0.1, round(o.seconds / t1, 1))
            ex, sa = os.path.join(d, prog + ".ex.json"), os.path.join(d, prog + ".always.json")
            tn = run([tandem, "-Xprofile=" + ",".join(ANALYSES), "-Xprofile.format=json", "-Xprofile.out=" + ex,
                      src, str(scale)], prog + " exhaustive")
            ta = run([tandem, "-Xprofile.always", "-Xsample.seed=%d" % o.seed, *o.always_opt, "-Xprofile.format=json",
                      "-Xprofile.out=" + sa, src, str(scale)], prog + " always-on")
            exd, sad = th.load_profile(ex), th.load_profile(sa)
            for an in ANALYSES:
                e = next(x for x in exd if x["analysis"] == an)
                s = next(x for x in sad if x["analysis"] == an)
                rate = s.get("sample_rate", 1.0)
                actual, sampled = th.items_of(e, None), th.items_of(s, None)
                err, n, missing = th.error_rate(actual, sampled, rate)
                rows.append([prog, "%g" % scale, "%.1f" % ta, an, "%.4f" % rate, str(n), str(missing),
                             "%.2f%%" % (100 * th.weighted_error(actual, sampled, rate)),
                             "%.1f%%" % (100 * th.hot_overlap(actual, sampled)), "%.1f%%" % (100 * err)])
            print("%s: scale %g, exhaustive run %.1f s, always-on run %.1f s" % (prog, scale, tn, ta), flush=True)
    head = ["program", "scale", "always-on s", "analysis", "sampled", "items", "missing",
            "weighted error", "hot overlap", "error rate"]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    print()
    for r in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print("\ntargets (issue 17): weighted error <= 5% over a 10 s run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
