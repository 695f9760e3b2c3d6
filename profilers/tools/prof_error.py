#!/usr/bin/env python3
"""prof_error.py: the sampling error of a profile (CAB paper, section 6.4).

    prof_error.py EXHAUSTIVE.json SAMPLED.json [--rate R] [--analysis NAME] [--min-count N]
                  [--metric FIELD] [--value]

Reads two JSON profiles of the same analysis (tandem -Xprofile.format=json; a file may
hold several documents, one per analysis, and --analysis picks one) and prints the
paper's error rate: the mean over the items of the exhaustive profile of

    |actual - sampled / rate| / actual

where an item is what the analysis counts: a function (methodcount), a caller -> callee
edge (callgraph), a calling context (calltree), a function's accesses or misses
(cachesim, --metric accesses|l1_misses|l2_misses), a function's path (pathprof). An item missing from the sampled
profile counts as sampled 0 (error 1). JSON profiles hold observed counts, so the rate
divides here: --rate, or else the sampled profile's own "sample_rate". Profiles of other
analyses can take part by carrying "items": [{"key": ..., "count": n}, ...].

Prints one line; --value prints the error rate alone. Exit status 2 on bad input.
The same computation in C is prof_error_rate (profilers/prof_api.h).
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)


def fail(msg):
    print("prof_error: " + msg, file=sys.stderr)
    sys.exit(2)


def pick(docs, path, analysis):
    if analysis is not None:
        found = [d for d in docs if d["analysis"] == analysis]
        if not found:
            fail("%s has no %s profile (it has: %s)" % (path, analysis, ", ".join(d["analysis"] for d in docs)))
        return found[0]
    if len(docs) > 1:
        fail("%s holds several profiles (%s): say which with --analysis" %
             (path, ", ".join(d["analysis"] for d in docs)))
    return docs[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Sampling error rate of a profile (CAB paper 6.4).")
    ap.add_argument("exhaustive")
    ap.add_argument("sampled")
    ap.add_argument("--rate", type=float, help="sampling rate (default: the sampled profile's sample_rate)")
    ap.add_argument("--analysis", help="which profile, when a file holds several")
    ap.add_argument("--metric", help="cachesim: accesses (default), l1_misses or l2_misses")
    ap.add_argument("--value", action="store_true", help="print the error rate alone")
    ap.add_argument("--min-count", type=float, default=0,
                    help="only items counted at least this many times exhaustively (e.g. 100/rate: "
                         "items a sample sees about 100 times)")
    o = ap.parse_args(argv)
    try:
        ex = pick(th.load_profile(o.exhaustive), o.exhaustive, o.analysis)
        sdocs = th.load_profile(o.sampled)
    except ValueError as e:
        fail(str(e))
    sa = pick(sdocs, o.sampled, o.analysis if o.analysis or len(sdocs) == 1 else ex["analysis"])
    if ex["analysis"] != sa["analysis"]:
        fail("the profiles are of different analyses: %s and %s" % (ex["analysis"], sa["analysis"]))
    rate = o.rate if o.rate is not None else sa.get("sample_rate", 1.0)
    if not (0 < rate <= 1):
        fail("the sampling rate must be in (0, 1], not %g" % rate)
    try:
        err, n, missing = th.error_rate(th.items_of(ex, o.metric), th.items_of(sa, o.metric), rate, o.min_count)
    except ValueError as e:
        fail(str(e))
    if o.value:
        print("%.6f" % err)
    else:
        print("%s: error rate %.6f (%.2f%%) over %d items at sampling rate %g; %d missing from the sampled profile"
              % (ex["analysis"], err, 100 * err, n, rate, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
