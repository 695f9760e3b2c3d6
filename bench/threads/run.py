#!/usr/bin/env python3
"""Thread benchmarks: spawn+join, channel ping-pong and a contended mutex, under native
threads and green threads (1 and 2 carriers), side by side.

Each program takes an iteration count. A run's time is the wall-clock time of the whole
process; the cost of one operation is (median time with N iterations - median time with 0
iterations) / N, which removes start-up. Configurations run interleaved, run by run, so
that load on the shared machine falls on all of them alike.

    python3 bench/threads/run.py [--tandem build/tandem] [--runs 5] [--quick]
"""

import argparse
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

HERE = os.path.dirname(os.path.abspath(__file__))

# program, iterations (native, green), unit
BENCHES = [
    ("spawn_join.lua", 5000, 200000, "spawn+join"),
    ("pingpong.lua", 20000, 400000, "round trip"),
    ("mutex.lua", 400000, 2000000, "lock+unlock"),
]
CONFIGS = [
    ("native", ["-Xthreads=native"]),
    ("green/1", ["-Xthreads=green", "-Xcarriers=1"]),
    ("green/2", ["-Xthreads=green", "-Xcarriers=2"]),
]


def seconds(tandem, opts, prog, n):
    r = th.run_once([tandem] + opts + [os.path.join(HERE, prog), str(n)], timeout=600)
    if r.code != 0:
        sys.exit("bench/threads: %s %s failed: %s" % (prog, " ".join(opts), r.err))
    return r.seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a tenth of the iterations")
    opts = ap.parse_args()
    scale = 0.1 if opts.quick else 1.0
    rows = []
    for prog, n_native, n_green, unit in BENCHES:
        times = {}
        for _ in range(opts.runs):
            for name, copts in CONFIGS:
                n = int((n_native if name == "native" else n_green) * scale)
                times.setdefault((name, "n"), []).append(seconds(opts.tandem, copts, prog, n))
                times.setdefault((name, "0"), []).append(seconds(opts.tandem, copts, prog, 0))
        per = {}
        for name, _ in CONFIGS:
            n = int((n_native if name == "native" else n_green) * scale)
            full = times[(name, "n")]
            base = statistics.median(times[(name, "0")])
            per[name] = ((statistics.median(full) - base) / n * 1e9, (min(full) - base) / n * 1e9,
                         (max(full) - base) / n * 1e9)
        rows.append((prog, unit, per))

    print("Thread benchmarks: ns per operation (median of %d runs; min-max), %s" % (opts.runs, opts.tandem))
    print()
    print("| benchmark | operation | " + " | ".join(n for n, _ in CONFIGS) + " | native / green/1 |")
    print("| --- | --- | " + " | ".join("---:" for _ in CONFIGS) + " | ---: |")
    for prog, unit, per in rows:
        cells = ["%.0f (%.0f-%.0f)" % per[n] for n, _ in CONFIGS]
        ratio = per["native"][0] / per["green/1"][0] if per["green/1"][0] > 0 else float("inf")
        print("| %s | %s | %s | %.1fx |" % (prog[:-4], unit, " | ".join(cells), ratio))


if __name__ == "__main__":
    main()
