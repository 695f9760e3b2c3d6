#!/usr/bin/env python3
"""Sampled instrumentation (-Xsample.mode=code, vm/prof/vm_sample.h) against the exhaustive
profile as the oracle.

  exact      at -Xsample.rate=1 the sampled-code profile is the exhaustive one, byte for
             byte in JSON (methodcount, callgraph, calltree, pathprof), for programs of known
             shape (calls from C, tail calls, coroutines, metamethods, errors, recursion,
             every path shape) under the JIT and the interpreter (under the JIT also with
             -Xsample.twin=64, so frames that begin interpreted in the window and go on in
             twins compiled later meet the oracle too), and
             for thread programs under native threads and green threads on one and two
             carriers.
  known      sample_known.lua (a fixed random mix of calls and paths) at 5%, three seeds,
             JIT and interpreter, native and green threads: for each analysis the weighted
             error stays within 3x what a binomial model predicts for the ticks sampled
             (predicted() below), the hot items are all found, the measured fraction is
             near the rate, and the text report says it is an estimate.
  loops      sample_loops.lua (paths_loops.lua's loops, hot) at 5%, pathprof and callgraph, so
             windows open and close at back edges inside hot loops: under -Xjit=on the windows
             run compiled code (-Xstats: most window ticks in compiled code; none with
             -Xsample.windows=interpreted); no path the exhaustive profile lacks (no half
             paths); the weighted error within 6x the binomial model (the program repeats one
             tick sequence, so a window's ticks are not independent: LOOPS_BOUND); and, the ticks
             being the same wherever code runs, the profile of a seed is the same, byte for
             byte, with compiled windows (twins compiled at once, the default, and late:
             -Xsample.twin=64), interpreted windows and -Xjit=off.
  adaptive   -Xsample.adaptive=on with slowed analyzers (-Xtest.analyzer_delay) on a small
             ring: the producer never blocks (-Xstats: blocks 0, blocked 0 ms), the rate
             drops, and the estimated call count of sample_known.lua's hottest function is
             within 4 standard deviations of a binomial model of the ticks sampled at each
             rate, weighted as the analyses weight them (EV_RATE), of the exhaustive count.
  always     -Xprofile.always: the call graph and the call tree, both estimates, by sampled code
             at 0.2% in windows of 32 ticks, adaptive, the program not pinned (-Xstats); options
             given explicitly win;
             the idle analyzer of its low-rate ring sleeps long (-Xstats: its mean sleep
             above 200 us, where a ring of an exhaustive producer is polled every 50 us at most).
  options    bad -Xsample.* values and combinations are refused (exit 2), naming the option.
"""
import argparse
import math
import os
import re
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = os.path.join(HERE, "..", "threads")
ANALYSES = ("methodcount", "callgraph", "calltree", "pathprof")
EXACT_PROGRAMS = ("known_calls.lua", "known_tree.lua", "known_graph.lua", "known_stale.lua", "paths_calls.lua",
                  "paths_loops.lua", "paths_pattern.lua", "shape.lua")
THREAD_PROGRAMS = (os.path.join(HERE, "known_threads.lua"), os.path.join(THREADS, "spawn_tree.lua"))
MODELS = {
    "native": ["-Xthreads=native"],
    "green1": ["-Xthreads=green", "-Xcarriers=1"],
    "green2": ["-Xthreads=green", "-Xcarriers=2"],
}
KNOWN = "sample_known.lua"
RATE = 0.05
BOUND = 3.0      # measured weighted error <= BOUND x the binomial model's expectation

check = th.Checks()
RATIOS = []      # (measured weighted error / the model's expectation, run): printed at the end
ENV = dict(os.environ)
ENV.setdefault("HOME", "/")


def run(tandem, args, timeout=300):
    r = th.run_once(th.tandem_argv(tandem, *args), cwd=HERE, env=ENV, timeout=timeout)
    return r.code, r.out, r.err


def profile(tandem, prog, analysis, opts, fmt="json"):
    """(exit status, report text, stderr) of one run with the report in a temporary file."""
    with tempfile.TemporaryDirectory(prefix="tandem_sample_") as d:
        out = os.path.join(d, "p.out")
        code, so, se = run(tandem, ["-Xprofile=" + analysis, "-Xprofile.format=" + fmt, "-Xprofile.out=" + out,
                                    *opts, prog])
        rep = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
        check.bump("runs")
    return code, rep, se


JIT_MODES = ["on", "off"]   # main: ["off"] when the build has no JIT or TANDEM_EXTRA_ARGS turns it off


def jit_modes():
    return JIT_MODES


# ----------------------------------------------------------------------------------------
# exact: rate 1 == exhaustive
# ----------------------------------------------------------------------------------------
def test_exact(tandem, prog, analysis, jit, model, extra=()):
    base = ["-Xjit=" + jit, *MODELS[model]]
    name = f"exact {os.path.basename(prog)} {analysis} jit={jit} {model}{''.join(' ' + x for x in extra)}"
    c1, ex, e1 = profile(tandem, prog, analysis, base)
    c2, sa, e2 = profile(tandem, prog, analysis, base + ["-Xsample.mode=code", "-Xsample.rate=1", *extra])
    if not check(f"{name}: both runs end well", c1 == 0 and c2 == 0 and ex and sa, e1[-800:] + e2[-800:]):
        return
    check(f"{name}: the rate-1 sampled profile is the exhaustive one", ex == sa,
          "exhaustive:\n" + ex[:1500] + "\nsampled:\n" + sa[:1500])


# ----------------------------------------------------------------------------------------
# known: 5% within the binomial model's error
# ----------------------------------------------------------------------------------------
def predicted(actual, sampled_ticks, ticks):
    """The weighted error a binomial model expects: the sample is [sampled_ticks] of the run's
    [ticks] ticks drawn at random (sample_known.lua's random mix makes neighbouring ticks
    independent), so an item counted c times is observed ~ Binomial(sampled_ticks, c / ticks)
    times and its estimate (observed / f, f = sampled_ticks / ticks) is off by
    sqrt(n q (1 - q)) / f in standard deviation, E|off| = sqrt(2 / pi) of that; the weighted
    error's expectation is their sum over the sum of the counts."""
    f = sampled_ticks / ticks
    total = sum(actual.values())
    s = 0.0
    for c in actual.values():
        q = min(1.0, c / ticks)
        s += math.sqrt(2 / math.pi) * math.sqrt(sampled_ticks * q * (1 - q)) / f
    return s / total


def check_weighted(name, actual, sampled, frac, inside, ticks, factor=BOUND):
    """The weighted error of [sampled] (at the measured fraction [frac], [inside] of [ticks]
    ticks sampled) within [factor] x the binomial model's expectation."""
    w = th.weighted_error(actual, sampled, frac)
    model = predicted(actual, inside, ticks)
    check.bump("known")
    RATIOS.append((w / model, name))
    check(f"{name}: weighted error {w:.4f} within {factor:g}x the binomial model's {model:.4f}", w <= factor * model,
          f"weighted {w:.5f}, bound {factor * model:.5f}")


STATS_RE = re.compile(r"\[stats\] sample code: .*: (\d+) windows, ticks in windows (\d+) of (\d+) \(fraction ([0-9.]+)\)")


def test_known(tandem, analysis, jit, model, seed, exhaustive):
    opts = ["-Xjit=" + jit, *MODELS[model], "-Xsample.mode=code", "-Xsample.rate=%g" % RATE,
            "-Xsample.seed=%d" % seed, "-Xstats"]
    name = f"known {analysis} jit={jit} {model} seed={seed}"
    code, rep, err = profile(tandem, KNOWN, analysis, opts)
    if not check(f"{name}: runs", code == 0 and rep, err[-800:]):
        return
    m = STATS_RE.search(err)
    if not check(f"{name}: -Xstats shows the sampled ticks", m is not None, err[-800:]):
        return
    windows, inside, ticks, frac = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))
    doc = th.json_docs(rep)[0]
    check(f"{name}: the JSON profile's sample_rate is the measured fraction",
          abs(doc["sample_rate"] - frac) < 1e-5 and doc.get("estimated") is True, f"{doc.get('sample_rate')} vs {frac}")
    check(f"{name}: the measured fraction is near the rate", 0.5 * RATE < frac < 1.5 * RATE and windows >= 20,
          f"fraction {frac}, {windows} windows")
    actual, sampled = th.items_of(exhaustive, None), th.items_of(doc, None)
    check_weighted(name, actual, sampled, frac, inside, ticks)
    check(f"{name}: every hot item found", th.hot_overlap(actual, sampled) == 1.0,
          f"overlap {th.hot_overlap(actual, sampled)}")


# ----------------------------------------------------------------------------------------
# loops: compiled windows flipping at back edges of hot loops
# ----------------------------------------------------------------------------------------
LOOPS = "sample_loops.lua"
# sample_loops.lua repeats one deterministic sequence of ticks, so the ticks of a window are
# correlated (a window sees a stretch of the sequence, not independent ticks) and its error
# exceeds the binomial model's, which assumes independent ticks: measured 1.4-5.2x for
# pathprof and callgraph, seeds 1-4, the same with compiled and interpreted windows (whose
# profiles are equal). The bound is wider for it; a half path or a lost window still fails.
LOOPS_BOUND = 6.0
# -Xsample.twin other than the default (1: at once), so that twins compiled late (frames
# interpreted in windows, then handed to the twin at an entry, a back edge or a return) are
# checked against the exhaustive profile and against twins compiled at once.
TWIN_OTHER = "-Xsample.twin=64"
WINDOWS_RE = re.compile(r"\[stats\] sample windows: (\w+); window ticks in compiled code (\d+), interpreted (\d+)")


FID_RE = re.compile(r'"fid":\d+,')


def without_ids(rep):
    """A report without its function ids (pathprof's "fid"). Ids are numbers given in the
    order functions are first met, not part of the profile: a twin compiled when a window
    first meets a frame of a function (before any event of it) numbers the function
    then, the interpreter at the function's first event, so the order may differ. Everything
    else (names, paths, counts, the order of the items) must be equal."""
    return FID_RE.sub("", rep)


def test_loops(tandem, analysis, seed, exhaustive):
    base = ["-Xsample.mode=code", "-Xsample.rate=%g" % RATE, "-Xsample.seed=%d" % seed, "-Xstats"]
    name = f"loops {analysis} seed={seed}"
    runs = {}
    for label, opts in (("compiled", ["-Xjit=on"]), ("compiled, " + TWIN_OTHER[2:], ["-Xjit=on", TWIN_OTHER]),
                        ("interpreted", ["-Xjit=on", "-Xsample.windows=interpreted"]), ("jit off", ["-Xjit=off"])):
        if label != "jit off" and "on" not in jit_modes():
            continue
        code, rep, err = profile(tandem, LOOPS, analysis, opts + base)
        if not check(f"{name} {label}: runs", code == 0 and rep, err[-800:]):
            return
        runs[label] = (rep, err)
    first = next(iter(runs))
    rep, err = runs[first]
    m = STATS_RE.search(err)
    if not check(f"{name}: -Xstats shows the sampled ticks", m is not None, err[-800:]):
        return
    inside, ticks, frac = int(m.group(2)), int(m.group(3)), float(m.group(4))
    doc = th.json_docs(rep)[0]
    actual, sampled = th.items_of(exhaustive, None), th.items_of(doc, None)
    check(f"{name}: no half paths (every item sampled is one the exhaustive profile has)",
          set(sampled) <= set(actual), str(sorted(map(str, set(sampled) - set(actual)))[:10]))
    check_weighted(name, actual, sampled, frac, inside, ticks, LOOPS_BOUND)
    for label, (rep2, err2) in runs.items():
        check(f"{name}: the {label} windows' profile is the {first} windows'", without_ids(rep2) == without_ids(rep),
              f"{first}:\n{rep[:1200]}\n{label}:\n{rep2[:1200]}")
    if "compiled" in runs:
        wm = WINDOWS_RE.search(runs["compiled"][1])
        check(f"{name}: -Xjit=on windows run compiled code (most window ticks)",
              wm is not None and wm.group(1) == "compiled" and int(wm.group(2)) > 4 * int(wm.group(3)),
              wm.group(0) if wm else runs["compiled"][1][-600:])
        wi = WINDOWS_RE.search(runs["interpreted"][1])
        check(f"{name}: -Xsample.windows=interpreted runs none compiled",
              wi is not None and wi.group(1) == "interpreted" and int(wi.group(2)) == 0,
              wi.group(0) if wi else runs["interpreted"][1][-600:])


def test_known_text(tandem):
    code, rep, err = profile(tandem, KNOWN, "methodcount", ["-Xsample.mode=code", "-Xsample.rate=5%"], fmt="text")
    check("known text: the report says it is an estimate", code == 0 and "estimate" in rep, rep[:600] + err[-400:])


# ----------------------------------------------------------------------------------------
# adaptive: never blocks, estimate within its predicted error
# ----------------------------------------------------------------------------------------
ADAPT_RE = re.compile(r"\[stats\] sample adaptive: .*ticks in windows per rate:(.*?); lowest rate")
CAB_TOTAL_RE = re.compile(r"\[stats\] cab total: .* blocks (\d+) blocked ([0-9.]+) ms")


def adaptive_sd(count, ticks, frac, levels):
    """The standard deviation of the estimate of an item counted [count] times in [ticks]
    ticks: the ticks sampled at shift k (levels: {k: ticks}) observe it ~ Binomial(n_k, q),
    q = count / ticks, each observation counting 2^k / frac."""
    q = min(1.0, count / ticks)
    return math.sqrt(sum(n * q * (1 - q) * 4 ** k for k, n in levels.items())) / frac


def test_adaptive(tandem, delay, seed, exhaustive):
    name = f"adaptive delay={delay}us seed={seed}"
    opts = ["-Xsample.mode=code", "-Xsample.rate=0.5", "-Xsample.adaptive=on", "-Xsample.seed=%d" % seed,
            "-Xtest.analyzer_delay=%d" % delay, "-Xcab.size=256k", "-Xcab.chunk=4k", "-Xstats"]
    code, rep, err = profile(tandem, KNOWN, "methodcount", opts)
    if not check(f"{name}: runs", code == 0 and rep, err[-800:]):
        return
    m, a, cab = STATS_RE.search(err), ADAPT_RE.search(err), CAB_TOTAL_RE.search(err)
    if not check(f"{name}: -Xstats shows the sampling and the ring", m and a and cab, err[-1200:]):
        return
    check(f"{name}: the producer never blocked", int(cab.group(1)) == 0 and float(cab.group(2)) == 0.0, cab.group(0))
    levels = {}
    for rate, n in re.findall(r" ([0-9.e-]+)(?: or less)?: (\d+)", a.group(1)):
        levels[round(math.log2(0.5 / float(rate)))] = int(n)
    # The rate halves whenever a window is not opened or ends early for want of room
    # (vm_sample.c, slow_down); it may be back up before the next window opens (the analyzer
    # caught up meanwhile), so the ticks at lower rates can be 0 on a loaded machine.
    gaps = re.search(r"windows not opened (\d+), ended early (\d+)", a.group(0))
    check(f"{name}: the rate dropped", any(k > 0 for k in levels) or
          (gaps is not None and int(gaps.group(1)) + int(gaps.group(2)) > 0), a.group(0))
    ticks, frac = int(m.group(3)), float(m.group(4))
    doc = th.json_docs(rep)[0]
    actual, sampled = th.items_of(exhaustive, None), th.items_of(doc, None)
    hot = max(actual, key=actual.get)
    est = sampled.get(hot, 0) / frac
    sd = adaptive_sd(actual[hot], ticks, frac, levels)
    check.bump("adaptive")
    check(f"{name}: the estimate of {hot}'s calls, {est:.0f}, within 4 sd ({sd:.0f}) of {actual[hot]}",
          abs(est - actual[hot]) <= 4 * sd, f"levels {levels}, fraction {frac}")


# ----------------------------------------------------------------------------------------
# options
# ----------------------------------------------------------------------------------------
BAD = [
    (["-Xsample.mode=sometimes"], "sample.mode"),
    (["-Xsample.window=0"], "sample.window"),
    (["-Xsample.rate=0"], "sample.rate"),
    (["-Xsample.seed=-1"], "sample.seed"),
    (["-Xsample.mode=code", "-Xcab.mode=sampling"], "sample.mode=code"),
    (["-Xsample.adaptive=on"], "sample.adaptive"),
    (["-Xsample.mode=code", "-Xsample.adaptive=maybe"], "sample.adaptive"),
    (["-Xsample.windows=interpreted"], "sample.windows"),
    (["-Xsample.mode=code", "-Xsample.windows=sometimes"], "sample.windows"),
    (["-Xsample.mode=code", "-Xsample.twin=0"], "sample.twin"),
    (["-Xsample.twin=8"], "sample.twin"),
    (["-Xsample.mode=code", "-Xsample.windows=interpreted", "-Xsample.twin=8"], "sample.twin"),
]


def test_options(tandem):
    for args, word in BAD:
        code, so, se = run(tandem, ["-Xprofile=methodcount", *args, os.path.join(HERE, "known_calls.lua")])
        check(f"options {' '.join(args)}: refused with exit 2, naming {word}", code == 2 and word in se,
              f"exit {code}: {se[-400:]}")
    code, so, se = run(tandem, ["-X"])
    for opt in ("sample.mode", "sample.window", "sample.seed", "sample.windows", "sample.twin"):
        check(f"options: tandem -X lists -X{opt}", code == 0 and ("-X" + opt) in so + se, (so + se)[-300:])


# ----------------------------------------------------------------------------------------
# always: the always-on preset
# ----------------------------------------------------------------------------------------
SAMPLE_CODE_RE = re.compile(r"\[stats\] sample code: rate ([0-9.e-]+) window (\d+) ticks")


def test_always(tandem, extra, rate, window):
    name = "always" + ("".join(" " + e for e in extra))
    with tempfile.TemporaryDirectory(prefix="tandem_sample_") as d:
        out = os.path.join(d, "p.json")
        code, so, se = run(tandem, ["-Xprofile.always", *extra, "-Xprofile.format=json", "-Xprofile.out=" + out,
                                    "-Xstats", "-Xsample.seed=1", KNOWN])
        rep = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    check.bump("runs")
    if not check(f"{name}: runs", code == 0 and rep, se[-800:]):
        return
    docs = th.json_docs(rep)
    check(f"{name}: a call graph and a call tree, both estimates",
          [d["analysis"] for d in docs] == ["callgraph", "calltree"] and all(0 < d.get("sample_rate", 1) < 1 for d in docs),
          rep[:400])
    m = SAMPLE_CODE_RE.search(se)
    check(f"{name}: sampled code at rate {rate:g} in windows of {window} ticks",
          m is not None and float(m.group(1)) == rate and int(m.group(2)) == window, se[-1200:])
    check(f"{name}: adaptive", "[stats] sample adaptive:" in se, se[-1200:])
    if not extra:
        check(f"{name}: the program is not pinned", "placement: not pinned (-Xprofile.always" in se, se[-1200:])
    elif "-Xaffinity=auto" in extra:
        check(f"{name}: -Xaffinity=auto given: pinned where there are cores to keep",
              "placement: application threads on CPU(s)" in se or "placement: not pinned (one core" in se
              or "placement: not pinned (topology unknown" in se, se[-1200:])
    cabs = th.Stats(se).cabs
    if check(f"{name}: -Xstats shows the ring", len(cabs) == 1, se[-1200:]) and not extra:
        c = cabs[0]
        check(f"{name}: the idle analyzer sleeps long ({c['idle_ms']:.1f} ms in {c['idle_sleeps']} sleeps)",
              c["idle_sleeps"] >= 1 and c["idle_ms"] / c["idle_sleeps"] > 0.2, c["line"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    tandem = os.path.abspath(a.tandem)
    code, so, se = run(tandem, ["-X"])
    if "built without the JIT" in so + se or th.jit_turned_off():
        JIT_MODES[:] = ["off"]
        print("JIT checks skipped: no JIT in this build, or TANDEM_EXTRA_ARGS turns it off")
    tasks = []
    for prog in EXACT_PROGRAMS:
        for analysis in ANALYSES:
            for jit in jit_modes():
                tasks.append(lambda p=prog, an=analysis, j=jit: test_exact(tandem, p, an, j, "native"))
            if "on" in jit_modes():  # the one window's frames in twins and interpreted, mixed (TWIN_OTHER)
                tasks.append(lambda p=prog, an=analysis: test_exact(tandem, p, an, "on", "native", [TWIN_OTHER]))
    for prog in THREAD_PROGRAMS:
        for analysis in ANALYSES:
            for model in MODELS:
                tasks.append(lambda p=prog, an=analysis, m=model: test_exact(tandem, p, an, jit_modes()[0], m))

    def known_tasks(analysis):
        code, rep, err = profile(tandem, KNOWN, analysis, [])
        if not check(f"known {analysis}: the exhaustive run", code == 0 and rep, err[-800:]):
            return
        ex = th.json_docs(rep)[0]
        for jit in jit_modes():
            for model in ("native", "green1"):
                for seed in (1, 2, 3):
                    test_known(tandem, analysis, jit, model, seed, ex)
    for analysis in ANALYSES:
        tasks.append(lambda an=analysis: known_tasks(an))

    def loops_tasks(analysis):
        code, rep, err = profile(tandem, LOOPS, analysis, [])
        if check(f"loops {analysis}: the exhaustive run", code == 0 and rep, err[-800:]):
            for seed in (1, 2):
                test_loops(tandem, analysis, seed, th.json_docs(rep)[0])
    for analysis in ("pathprof", "callgraph"):
        tasks.append(lambda an=analysis: loops_tasks(an))
    tasks.append(lambda: test_known_text(tandem))

    def adaptive_tasks():
        code, rep, err = profile(tandem, KNOWN, "methodcount", [])
        if check("adaptive: the exhaustive run", code == 0 and rep, err[-800:]):
            for delay in (200, 1000):
                for seed in (1, 2, 3):
                    test_adaptive(tandem, delay, seed, th.json_docs(rep)[0])
    tasks.append(adaptive_tasks)
    tasks.append(lambda: test_options(tandem))
    tasks.append(lambda: test_always(tandem, [], 0.002, 32))
    tasks.append(lambda: test_always(tandem, ["-Xsample.rate=1%", "-Xsample.window=64", "-Xaffinity=auto"], 0.01, 64))

    check.run_tasks(tasks, a.jobs)
    if RATIOS:
        RATIOS.sort()
        print("weighted error / binomial expectation: median %.2f, max %.2f (%s)"
              % (RATIOS[len(RATIOS) // 2][0], RATIOS[-1][0], RATIOS[-1][1]))
    n = check.counts
    return check.finish(f"{n['checks']} checks in {n['runs']} profiled runs ({n['known']} sampled at {RATE:g} "
                        f"against the binomial bound, {n['adaptive']} adaptive)")


if __name__ == "__main__":
    sys.exit(main())
