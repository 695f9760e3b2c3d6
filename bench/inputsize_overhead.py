#!/usr/bin/env python3
"""-Xprofile=inputsize's cost on bench/suite's single-threaded programs (--threaded: the
multi-threaded ones, native threads, one stream each, ordered by their EV_SYNC events): uninstrumented,
sequential (inline) and concurrent (CAB + analyzer thread), side by side.

    python3 bench/inputsize_overhead.py [--tandem build/tandem] [--scale 0.3] [--runs 5]
                                        [--jit on] [--affinity auto] [--only NAME]... [--threaded]
                                        [--csv FILE]

Each round runs every program in the three configurations, interleaved (notes/measuring.md:
A B C A B C); a concurrent run is framed by a round-trip probe between the two CPUs
(cab_bench -P) and its placement recorded. Reported per program: median wall time of each
configuration, the overheads time / uninstrumented, the ratio (concurrent - 1) /
(sequential - 1), and the analyzer's share: the time the analyzer spent analysing
(-Xstats "analysed: by the analyzer ... ms") over the concurrent run's wall time, with the
time the program thread waited on a full ring ("blocked"). Then the geometric means over
the programs of (1 + overhead). The targets (issue 18): concurrent <= 3x, and concurrent
overhead <= 0.5 x sequential overhead.
"""
import argparse
import csv
import math
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402

SUITE = os.path.join(th.REPO, "bench", "suite")


def one(tandem, prog, scale, jit, form, affinity):
    argv = [tandem, f"-Xjit={jit}", f"-Xaffinity={affinity}"]
    if form != "none":
        argv += ["-Xprofile=inputsize", "-Xprofile.out=/dev/null"]
        argv += ["-Xanalysis=sequential"] if form == "seq" else ["-Xanalysis=concurrent", "-Xstats"]
    r = th.run_once(argv + [prog, str(scale)], timeout=1200)
    if r.code != 0:
        raise RuntimeError(f"{' '.join(argv)} {prog}: exit {r.code}: {r.err[-400:]}")
    busy = blocked = None
    if form == "conc":
        t = th.parse_stats(r.err).total
        if t is not None:
            busy, blocked = t.get("analyzer_busy_ms"), t.get("blocked_ms")
    return r.seconds, busy, blocked


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(th.REPO, "build", "tandem"))
    ap.add_argument("--cab-bench", default=None, help="cab_bench for the placement probe (default: next to tandem)")
    ap.add_argument("--scale", type=float, default=0.3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jit", default="on")
    ap.add_argument("--affinity", default="auto", choices=("auto", "none"),
                    help="-Xaffinity for every run (auto pins the program thread, so a busy CPU 0 slows it)")
    ap.add_argument("--only", action="append")
    ap.add_argument("--threaded", action="store_true",
                    help="the multi-threaded programs (mt_*, native threads) instead of the single-threaded ones")
    ap.add_argument("--csv")
    a = ap.parse_args()
    cab_bench = a.cab_bench or os.path.join(os.path.dirname(os.path.abspath(a.tandem)), "cab", "cab_bench")
    if not os.path.exists(cab_bench):
        cab_bench = None
    progs = sorted(p for p in os.listdir(SUITE) if p.endswith(".lua") and p.startswith("mt_") == a.threaded)
    if a.only:
        progs = [p for p in progs if p[:-4] in a.only]
    times = {(p, f): [] for p in progs for f in ("none", "seq", "conc")}
    busy, blocked, places = {p: [] for p in progs}, {p: [] for p in progs}, {p: [] for p in progs}
    rows = []
    for rnd in range(a.runs):
        for p in progs:
            path = os.path.join(SUITE, p)
            for form in ("none", "seq", "conc"):
                p0 = th.probe(cab_bench) if form == "conc" else (None, "-")
                s, b, bl = one(a.tandem, path, a.scale, a.jit, form, a.affinity)
                p1 = th.probe(cab_bench) if form == "conc" else (None, "-")
                times[(p, form)].append(s)
                place = p0[1] if p0[1] == p1[1] else "moved"
                if form == "conc":
                    places[p].append(place)
                    if b is not None:
                        busy[p].append(b / 1000.0 / s)
                    if bl is not None:
                        blocked[p].append(bl / 1000.0)
                rows.append({"round": rnd, "program": p[:-4], "form": form, "seconds": f"{s:.4f}",
                             "analyzer_busy_s": "" if b is None else f"{b / 1000:.4f}", "placement": place})
            print(f"round {rnd + 1}/{a.runs}: {p} done", file=sys.stderr, flush=True)
    print(f"inputsize overhead: bench/suite {'multi' if a.threaded else 'single'}-threaded, scale {a.scale}, -Xjit={a.jit}, "
          f"-Xaffinity={a.affinity}, {a.runs} interleaved rounds, median wall seconds")
    print(f"{'program':12s} {'none':>7s} {'seq':>7s} {'conc':>7s} {'seq x':>7s} {'conc x':>7s} {'c/s ovh':>8s} "
          f"{'analyzer':>9s} {'blocked':>8s}  placements")
    gs, gc, ratios = [], [], []
    for p in progs:
        n, s, c = (statistics.median(times[(p, f)]) for f in ("none", "seq", "conc"))
        xs, xc = s / n, c / n
        gs.append(xs)
        gc.append(xc)
        r = (xc - 1) / (xs - 1) if xs > 1 else float("nan")
        ratios.append(r)
        bz = statistics.median(busy[p]) if busy[p] else float("nan")
        bl = statistics.median(blocked[p]) if blocked[p] else float("nan")
        pl = ",".join(f"{k}:{places[p].count(k)}" for k in sorted(set(places[p])))
        print(f"{p[:-4]:12s} {n:7.3f} {s:7.3f} {c:7.3f} {xs:7.2f} {xc:7.2f} {r:8.2f} {100 * bz:8.1f}% {bl:7.3f}s  {pl}")
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    gms, gmc = geo(gs), geo(gc)
    print(f"{'geomean':12s} {'':7s} {'':7s} {'':7s} {gms:7.2f} {gmc:7.2f} {(gmc - 1) / (gms - 1):8.2f}")
    print(f"targets: concurrent <= 3x: {'met' if gmc <= 3 else 'missed'} ({gmc:.2f}x); concurrent overhead <= 0.5 x "
          f"sequential overhead: {'met' if (gmc - 1) <= 0.5 * (gms - 1) else 'missed'} "
          f"({(gmc - 1) / (gms - 1):.2f})")
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
