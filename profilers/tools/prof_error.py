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
import json
import sys


def fail(msg):
    print("prof_error: " + msg, file=sys.stderr)
    sys.exit(2)


def load_docs(path):
    """Every JSON document in [path] (concatenated, whitespace between)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    except UnicodeDecodeError:
        fail("%s is not UTF-8" % path)
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        try:
            doc, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            fail("%s: not a JSON profile: %s" % (path, e))
        if not isinstance(doc, dict) or "analysis" not in doc:
            fail("%s: a JSON document without \"analysis\"" % path)
        docs.append(doc)
    if not docs:
        fail("%s: no profile in it" % path)
    return docs


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


def add(items, key, n):
    items[key] = items.get(key, 0) + n


def items_of(doc, metric):
    """{item key: count} of one profile."""
    a = doc["analysis"]
    items = {}
    if "items" in doc:
        for it in doc["items"]:
            k = it["key"]
            add(items, json.dumps(k) if isinstance(k, (list, dict)) else k, it["count"])
    elif a == "methodcount":
        for f in doc["functions"]:
            add(items, f["function"], f["calls"])
    elif a == "callgraph":
        for e in doc["edges"]:
            add(items, (e["caller"], e["callee"]), e["calls"])
    elif a == "calltree":
        # contexts: the path of function names from the thread's root; summed over threads
        for t in doc["threads"]:
            path = {}
            for n in t["nodes"]:
                if n["parent"] is None:
                    path[n["id"]] = ()
                    continue
                p = path[n["parent"]] + (n["function"],)
                path[n["id"]] = p
                if n["function"] != "[C]":  # a [C] node counts gaps, not calls
                    add(items, p, n["calls"])
    elif a == "pathprof":
        for pth in doc["paths"]:
            add(items, (pth["function"], pth["path"]), pth["count"])
    elif a == "cachesim":
        m = metric or "accesses"
        if m not in ("accesses", "l1_misses", "l2_misses"):
            fail("cachesim has no metric %s (accesses, l1_misses, l2_misses)" % m)
        for f in doc["functions"]:
            add(items, f["function"], f[m])
    else:
        fail("no items known for analysis %s (give the profile an \"items\" list)" % a)
    return items


def error_rate(actual, sampled, rate, min_count=0):
    """(mean error, items counted, items missing from sampled). [min_count] > 0: only the
    items counted at least that many times exhaustively."""
    total, n, missing = 0.0, 0, 0
    for k, a in actual.items():
        if a <= 0 or a < min_count:
            continue
        s = sampled.get(k, 0)
        missing += k not in sampled
        total += abs(a - s / rate) / a
        n += 1
    return (total / n if n else float("nan")), n, missing


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
    ex = pick(load_docs(o.exhaustive), o.exhaustive, o.analysis)
    sdocs = load_docs(o.sampled)
    sa = pick(sdocs, o.sampled, o.analysis if o.analysis or len(sdocs) == 1 else ex["analysis"])
    if ex["analysis"] != sa["analysis"]:
        fail("the profiles are of different analyses: %s and %s" % (ex["analysis"], sa["analysis"]))
    rate = o.rate if o.rate is not None else sa.get("sample_rate", 1.0)
    if not (0 < rate <= 1):
        fail("the sampling rate must be in (0, 1], not %g" % rate)
    err, n, missing = error_rate(items_of(ex, o.metric), items_of(sa, o.metric), rate, o.min_count)
    if o.value:
        print("%.6f" % err)
    else:
        print("%s: error rate %.6f (%.2f%%) over %d items at sampling rate %g; %d missing from the sampled profile"
              % (ex["analysis"], err, 100 * err, n, rate, missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
