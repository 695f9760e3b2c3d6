#!/usr/bin/env python3
"""prof_error.py: the sampling error of a profile (CAB paper, section 6.4).

    prof_error.py EXHAUSTIVE.json SAMPLED.json [--rate R] [--analysis NAME] [--min-count N]
                  [--metric FIELD] [--value]

Reads two JSON profiles of the same analysis (tandem -Xprofile.format=json; a file may
hold several documents, one per analysis, and --analysis picks one) and prints three
measures of the sampled profile's error:

  - the paper's error rate, the mean over the items of the exhaustive profile of
        |actual - sampled / rate| / actual
    which items counted once or a few times dominate (no 5% sampler can estimate them);
  - the weighted error: the sum over the items of |actual - sampled / rate|, divided by the
    sum of the actual counts (how much of the profile's weight is misplaced);
  - the hot-item overlap: of the items making up 90% of the exhaustive profile, the
    fraction the sample ranks in its own top 90% (whether it names the same hot spots).

where an item is what the analysis counts: a function (methodcount), a caller -> callee
edge (callgraph), a calling context (calltree), a function's accesses or misses
(cachesim, --metric accesses|l1_misses|l2_misses), a function's path (pathprof). An item missing from the sampled
profile counts as sampled 0 (error 1). JSON profiles hold observed counts, so the rate
divides here: --rate, or else the sampled profile's own "sample_rate". Profiles of other
analyses can take part by carrying "items": [{"key": ..., "count": n}, ...].

Prints one line; --value prints the error rate alone, --measure picks which (error,
weighted, overlap). Exit status 2 on bad input.
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
    ap.add_argument("--value", action="store_true", help="print one measure alone (--measure)")
    ap.add_argument("--measure", choices=("error", "weighted", "overlap"), default="error",
                    help="with --value: the paper's error rate (default), the weighted error or the hot-item overlap")
    ap.add_argument("--share", type=float, default=0.9, help="hot items: the share of the profile they make up (0.9)")
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
        actual, sampled = th.items_of(ex, o.metric), th.items_of(sa, o.metric)
        err, n, missing = th.error_rate(actual, sampled, rate, o.min_count)
    except ValueError as e:
        fail(str(e))
    weighted = th.weighted_error(actual, sampled, rate)
    overlap = th.hot_overlap(actual, sampled, o.share)
    if o.value:
        print("%.6f" % {"error": err, "weighted": weighted, "overlap": overlap}[o.measure])
    else:
        print("%s: error rate %.6f (%.2f%%) over %d items at sampling rate %g; %d missing from the sampled profile;"
              " weighted error %.6f (%.2f%%); hot-item overlap %.4f (top %g%%)"
              % (ex["analysis"], err, 100 * err, n, rate, missing, weighted, 100 * weighted, overlap, 100 * o.share))
    return 0


if __name__ == "__main__":
    sys.exit(main())
