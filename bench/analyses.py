#!/usr/bin/env python3
"""The analyses on bench/programs: sampling error and concurrent vs sequential cost.

    python3 bench/analyses.py [--runs N] [--rate 0.05] [--only NAME]... [--no-timing]
                              [--no-error] [--analyses callgraph,pathprof,...] [--csv FILE]

Error. For callgraph and pathprof (--error-analyses), each program runs once exhaustively
(concurrent) and once sampled at --rate, both writing JSON profiles; the error rate is the
CAB paper's (section 6.4): the mean over the items of the exhaustive profile of
|actual - sampled / rate| / actual (profilers/tools/prof_error.py computes it), reported
over every item ("all", as the paper defines it) and over the items counted at least
100 / rate times exhaustively ("hot": a sample sees them about 100 times or more). An item
seen a handful of times cannot be estimated from a 5% sample (a call made once is missed
95% of the time: error 1 for that item), so the first figure is dominated by how many rare
items a program has; the second says how well the items a sample can see are estimated. Sampling is deterministic (a fixed seed), so
one run each suffices.

Cost. Every program runs uninstrumented, and with each analysis sequential (inline) and
concurrent (CAB + analyzer thread): --runs rounds, the configurations interleaved within
a round (measuring.md), wall-clock medians. Overhead = time / uninstrumented - 1. Every
concurrent run is framed by a cache-line round-trip probe between the two CPUs
(build/cab/cab_bench -P); the placement class of each run is recorded, and a run whose two
probes disagree is marked "moved". Reported per analysis: the geometric mean over the
programs of (1 + overhead) for both forms, and concurrent overhead / sequential overhead.
"""
import argparse
import csv
import math
import os
import pathlib
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

PROGRAMS = os.path.join(th.REPO, "bench", "programs")
ANALYSES = ["methodcount", "callgraph", "calltree", "pathprof", "cachesim"]


def run(cmd, timeout=600):
    r = th.run_once(cmd, timeout=timeout)
    if r.code != 0:
        raise RuntimeError("%s: exit %s: %s" % (" ".join(cmd), r.code, r.err[-400:]))
    return r.seconds


def profile_json(tandem, prog, analysis, extra, path):
    run([tandem, "-Xprofile=" + analysis, "-Xprofile.format=json", "-Xprofile.out=" + path] + extra + [prog])
    return th.load_profile(path)[0]


def errors(tandem, progs, analyses, rate, rows):
    print("sampling error at rate %g: all items (count) / items a sample sees ~100 times or more, "
          "i.e. counted >= %d times (count)" % (rate, round(100 / rate)))
    print("%-20s %s" % ("program", "  ".join("%22s" % a for a in analyses)))
    summary = {a: ([], []) for a in analyses}
    with tempfile.TemporaryDirectory() as tmp:
        for prog in progs:
            name = os.path.basename(prog)[:-4]
            cells = []
            for a in analyses:
                ex = profile_json(tandem, prog, a, [], os.path.join(tmp, "ex.json"))
                sa = profile_json(tandem, prog, a, ["-Xcab.mode=sampling", "-Xsample.rate=%g" % rate],
                                  os.path.join(tmp, "sa.json"))
                r = sa.get("sample_rate", rate)
                act, smp = th.items_of(ex, None), th.items_of(sa, None)
                e_all, n_all, _ = th.error_rate(act, smp, r)
                e_hot, n_hot, _ = th.error_rate(act, smp, r, 100.0 / rate)
                summary[a][0].append(e_all)
                summary[a][1].append(e_hot)
                rows.append({"kind": "error", "program": name, "analysis": a, "rate": rate,
                             "error_all": "%.5f" % e_all, "items_all": n_all,
                             "error_hot": "%.5f" % e_hot, "items_hot": n_hot})
                cells.append("%6.2f%% (%3d) %5.2f%% (%2d)" % (100 * e_all, n_all, 100 * e_hot, n_hot))
            print("%-20s %s" % (name, "  ".join(cells)), flush=True)
    for a in analyses:
        hot = [e for e in summary[a][1] if not math.isnan(e)]
        print("%-12s mean error: all items %.2f%%, hot items %.2f%% (%d programs have hot items)" %
              (a, 100 * statistics.mean(summary[a][0]), 100 * statistics.mean(hot) if hot else float("nan"),
               len(hot)))
    return summary


def timing(tandem, cab_bench, progs, analyses, runs, rows):
    configs = [("base", None, None)]
    for a in analyses:
        configs.append(("seq", a, ["-Xprofile=" + a, "-Xanalysis=sequential"]))
        configs.append(("conc", a, ["-Xprofile=" + a]))
    times = {}  # (prog, form, analysis) -> [seconds]
    places = {}
    devnull_out = ["-Xprofile.out=/dev/null"]
    for r in range(runs):
        for prog in progs:
            for form, a, args in configs:
                cmd = [tandem] + (args + devnull_out if args else []) + [prog]
                p0 = th.probe(cab_bench) if form == "conc" else (None, "-")
                t = run(cmd)
                p1 = th.probe(cab_bench) if form == "conc" else (None, "-")
                times.setdefault((prog, form, a), []).append(t)
                place = p0[1] if p0[1] == p1[1] else "moved"
                places.setdefault(place, 0)
                places[place] += 1
                rows.append({"kind": "time", "program": os.path.basename(prog)[:-4], "analysis": a or "",
                             "form": form, "run": r, "seconds": "%.4f" % t, "placement": place,
                             "probe_before_ns": p0[0] or "", "probe_after_ns": p1[0] or ""})
        print("round %d/%d done" % (r + 1, runs), file=sys.stderr, flush=True)
    print("\ncost (medians of %d interleaved runs; geometric means over %d programs of time / uninstrumented)"
          % (runs, len(progs)))
    print("concurrent runs by placement: %s" % ", ".join("%s %d" % kv for kv in sorted(places.items())
                                                          if kv[0] != "-"))
    print("%-12s %10s %10s %14s" % ("analysis", "sequential", "concurrent", "conc/seq ovh"))
    for a in analyses:
        ls, lc = [], []
        for prog in progs:
            b = statistics.median(times[(prog, "base", None)])
            ls.append(math.log(statistics.median(times[(prog, "seq", a)]) / b))
            lc.append(math.log(statistics.median(times[(prog, "conc", a)]) / b))
        gs, gc = math.exp(statistics.mean(ls)), math.exp(statistics.mean(lc))
        ratio = (gc - 1) / (gs - 1) if gs > 1 else float("nan")
        print("%-12s %9.3fx %9.3fx %14.2f" % (a, gs, gc, ratio))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--cab-bench", default=os.path.join(th.REPO, "build", "cab", "cab_bench"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", type=float, default=0.05)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--analyses", default=",".join(ANALYSES))
    ap.add_argument("--error-analyses", default="callgraph,pathprof")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--no-error", action="store_true")
    ap.add_argument("--csv")
    o = ap.parse_args()
    # A private copy: the binary under build/ may be rebuilt while this runs (for minutes).
    tmpdir = tempfile.mkdtemp(prefix="tandem_analyses_")
    tandem = os.path.join(tmpdir, "tandem")
    shutil.copy2(os.path.abspath(o.tandem), tandem)
    cab_bench = o.cab_bench if os.path.exists(o.cab_bench) else None
    progs = sorted(os.path.join(PROGRAMS, f) for f in os.listdir(PROGRAMS) if f.endswith(".lua"))
    if o.only:
        progs = [p for p in progs if os.path.basename(p)[:-4] in o.only]
    rows = []
    if not o.no_error:
        errors(tandem, progs, o.error_analyses.split(","), o.rate, rows)
    if not o.no_timing:
        timing(tandem, cab_bench, progs, o.analyses.split(","), o.runs, rows)
    if o.csv:
        keys = sorted({k for r in rows for k in r})
        with open(o.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
