#!/usr/bin/env python3
"""Sharded analysis (-Xanalysis.shards, issue 19): does a second analyzer on one stream cut
the time the program thread waits on its full ring?

    python3 bench/shards_blocked.py [--tandem build/tandem] [--scale 0.2] [--runs 7]
                                    [--analysis cachesim] [--affinity auto] [--only NAME]...

One language thread (bench/suite's single-threaded programs, default richards and json), the
analysis concurrent and exhaustive, with 1 analyzer and with the stream split over 2 and 4
shards (each shard an analyzer thread reading every event and owning a share of the items:
cachesim's sets). The configurations of a round run interleaved (notes/measuring.md).
Reported per program and configuration, medians over the rounds: wall time, the time the
program thread was blocked on a full ring, and each analyzer's busy time (-Xstats: "analysed:
by the analyzer" for 1 analyzer, the per-shard line otherwise).

The issue's target (2 shards at most half of 1 analyzer's blocked time) assumes a free core
for each analyzer. Placement matters more than anything here: on a machine with fewer than
1 + shards CPUs the shards share a core (under -Xaffinity=auto tandem puts every analyzer on
the CPUs the program thread leaves), so they cannot run at once; the busiest shard's busy
time is then the figure that says what a free core per shard would give (the ring drains at
the pace of the slowest shard).
"""
import argparse
import os
import pathlib
import re
import statistics
import sys

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402

SUITE = os.path.join(th.REPO, "bench", "suite")
_RE_SHARDS = re.compile(r"\[stats\] cab thread \d+ shards: (.*)")
_RE_SHARD = re.compile(r"(\d+): (\d+) chunks ([0-9.]+) ms")


def one(tandem, prog, scale, analysis, shards, affinity):
    argv = [tandem, "-Xaffinity=" + affinity, "-Xprofile=" + analysis, "-Xprofile.out=/dev/null",
            "-Xanalysis=concurrent", "-Xanalysis.shards=%d" % shards, "-Xstats", prog, str(scale)]
    r = th.run_once(argv, timeout=1200)
    if r.code != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), r.code, r.err[-400:]))
    t = th.parse_stats(r.err).total
    if t is None or not th.nothing_lost(t):
        raise RuntimeError("%s: no -Xstats total, or events lost" % " ".join(argv))
    m = _RE_SHARDS.search(r.err)
    busy = [float(x.group(3)) for x in _RE_SHARD.finditer(m.group(1))] if m else [t["analyzer_busy_ms"]]
    return {"wall": r.seconds, "blocked": t["blocked_ms"], "busy": busy}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(th.REPO, "build", "tandem"))
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--analysis", default="cachesim", choices=("cachesim", "methodcount"),
                    help="an analysis that can be split (-Xanalysis.shards)")
    ap.add_argument("--affinity", default="auto", choices=("auto", "none"))
    ap.add_argument("--shards", default="1,2,4", help="comma-separated shard counts; the first is the reference")
    ap.add_argument("--only", action="append", help="program name (repeatable; default richards, json)")
    a = ap.parse_args()
    progs = a.only or ["richards", "json"]
    shards = [int(x) for x in a.shards.split(",")]
    res = {(p, k): [] for p in progs for k in shards}
    for rnd in range(a.runs):
        for p in progs:
            for k in (shards if rnd % 2 == 0 else shards[::-1]):
                res[(p, k)].append(one(a.tandem, os.path.join(SUITE, p + ".lua"), a.scale, a.analysis, k, a.affinity))
        print("round %d/%d done" % (rnd + 1, a.runs), file=sys.stderr, flush=True)
    med = statistics.median
    print("%s, one language thread, scale %g, -Xaffinity=%s, %d CPUs, %d interleaved rounds, medians"
          % (a.analysis, a.scale, a.affinity, os.cpu_count(), a.runs))
    print("%-10s %6s %8s %11s %9s %s" % ("program", "shards", "wall s", "blocked ms", "vs ref", "busy ms per analyzer"))
    for p in progs:
        ref = med(r["blocked"] for r in res[(p, shards[0])])
        for k in shards:
            rs = res[(p, k)]
            b = med(r["blocked"] for r in rs)
            busy = [med(r["busy"][i] for r in rs) for i in range(len(rs[0]["busy"]))]
            print("%-10s %6d %8.3f %11.1f %9s %s" % (p, k, med(r["wall"] for r in rs), b,
                                                   "%.2f" % (b / ref) if ref else "-",
                                                   " ".join("%.1f" % x for x in busy)))


if __name__ == "__main__":
    main()
