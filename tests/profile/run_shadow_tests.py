#!/usr/bin/env python3
"""Shadow profiling (-Xsample.mode=shadow, vm/prof/vm_shadow.h) against the exhaustive
profile as the oracle, and the program's run against a run without shadows.

  accuracy   sample_known.lua (a fixed random mix of calls and paths), each analysis, JIT and
             interpreter, native threads and green threads on one carrier: weighted error at
             most 5% and hot-item overlap at least 0.8 (profilers/tools/prof_error.py's measures); the
             JSON report says it is a shadow estimate with its coverage; the text report says
             so too.
  exact      shadow_exact.lua: one shadow, forked in warm()'s loop, runs all of sample_known.lua's
             mix and ends at os.execute (a side effect) while the program sleeps: its profile of
             the mix (every item but warm's and shadow_exact's main chunk's, which began before
             the fork) equals the
             exhaustive profile count for count, for each analysis, whether the shadow's window
             ran the instrumented twins (-Xjit=on: -Xstats says "compiled" and counts every
             window tick in compiled code), the instrumented interpreter
             (-Xsample.windows=interpreted) or -Xjit=off (both: "interpreted", no tick in
             compiled code).
  effects    shadow_effects.lua writes a file and prints lines while it computes, reads the
             file back, appends to it; with "stdin" it reads a pipe, with "ffi" it calls
             strlen: stdout and the file are byte for byte those of the run without shadows,
             the shadows' events were analysed (none failed), and they ended where they had to
             (-Xstats: at an input read, at an ffi call).
  kill       -Xtest.shadow_kill=N hangs every Nth shadow: the watchdog (-Xshadow.timeout)
             kills it, its events are dropped and counted, the program's output and file are
             intact; N=1: nothing analysed, coverage 0.
  idle       -Xtest.shadow_idle=sleep and spin (the breakdown of shadow_cpu.py): each shadow runs
             no window and lives until the program's end, which stops it: the output and file
             intact, every shadow analysed with no event and ended at the program's end,
             coverage 0, an empty profile.
  threads    shadow_threads.lua under green threads on one carrier and on two (the other
             carrier switches its green thread out before each fork: the gather): the output
             (a channel pipeline's sum) is intact, shadows were analysed and none failed, their
             windows ran compiled under -Xjit=on (-Xstats) and interpreted under -Xjit=off; on
             one carrier each thread's share of the calls is within 0.02 of the exhaustive one
             (a round robin: 1:2:3 at every stretch of the run); on two, every worker is seen
             (a worker left unrun, as when the shadow's carrier never took from the other
             carrier's queue, fails). The shares themselves are not checked on two carriers:
             the shadow runs each carrier's threads at the carriers' equal pace
             (vm_green.c's shadow_one), so its shares follow the program's schedule at each
             fork, which moves with the placement of the workers on the carriers, and the
             shadows a short run gets are few (seen 0.04-0.4 for a share of 0.17, 0.34-0.88
             for 0.49); under native threads the program forks only while it is
             single-threaded (-Xstats counts the checks skipped) and its output is intact.
  options    bad -Xshadow.* values and combinations are refused (exit 2), naming the option;
             tandem -X lists the options.
"""
import argparse
import os
import re
import subprocess
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSES = ("methodcount", "callgraph", "calltree", "pathprof")
KNOWN = "sample_known.lua"
EFFECTS = "shadow_effects.lua"
THREADS = "shadow_threads.lua"
EXACT = "shadow_exact.lua"
MODELS = {"native": ["-Xthreads=native"], "green1": ["-Xthreads=green", "-Xcarriers=1"]}
GREEN2 = ["-Xthreads=green", "-Xcarriers=2"]   # threads: shadows of a program on two carriers
MAX_WEIGHTED = 0.05
# Hot-item overlap: sample_known.lua's top 90% holds 5 items of callgraph's and calltree's 8,
# the fifth at the boundary, which a shadow's estimate moves across now and then (the
# shadows are few long windows, spaced by their life on a loaded machine): at most one of
# them may fall out of the sample's own top 90%.
MIN_OVERLAP = 0.8
SHARE_TOL = 0.02

STATS_RE = re.compile(r"\[stats\] shadow: .*?forked (\d+), analysed (\d+) \(\d+ events\), dropped (\d+) \(killed by the "
                      r"watchdog (\d+), failed (\d+), cut by the program's end (\d+)\), not forked while several native "
                      r"threads (\d+), .*coverage ([0-9.]+)\)")
ENDS_RE = re.compile(r"\[stats\] shadow ends: (.*)")
WINDOWS_RE = re.compile(r"\[stats\] shadow windows: (\w+); window ticks in compiled code (\d+), interpreted (\d+)")

check = th.Checks()
ENV = dict(os.environ)
ENV.setdefault("HOME", "/")
JIT_MODES = ["on", "off"]   # main: th.jit_modes_of


def run(tandem, args, stdin=None, timeout=300):
    """(exit status, stdout, stderr); [stdin] (str) is fed through a pipe, which a shadow must
    not read (run_once would feed it from a regular file)."""
    check.bump("runs")
    argv = th.tandem_argv(tandem, *args)
    if stdin is None:
        r = th.run_once(argv, cwd=HERE, env=ENV, timeout=timeout)
        return r.code, r.out, r.err
    try:
        p = subprocess.run(argv, cwd=HERE, env=ENV, input=stdin.encode(), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -9, "", "timed out"
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def profile(tandem, prog, analysis, opts, fmt="json", prog_args=(), stdin=None):
    """(exit status, report text, stdout, stderr) of one run with the report in a temporary file."""
    with tempfile.TemporaryDirectory(prefix="tandem_shadow_") as d:
        out = os.path.join(d, "p.out")
        code, so, se = run(tandem, ["-Xprofile=" + analysis, "-Xprofile.format=" + fmt, "-Xprofile.out=" + out,
                                    *opts, prog, *prog_args], stdin=stdin)
        rep = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    return code, rep, so, se


def stats(err):
    """(forked, analysed, dropped, killed, failed, cut, skipped for threads, coverage) and
    {end reason: count}, from -Xstats; None if absent."""
    m, e = STATS_RE.search(err), ENDS_RE.search(err)
    if not m or not e:
        return None, None
    vals = [int(x) for x in m.groups()[:-1]] + [float(m.group(8))]
    ends = {k.strip(): int(v) for k, v in (p.rsplit(" ", 1) for p in e.group(1).split(","))}
    return vals, ends


# ----------------------------------------------------------------------------------------
# accuracy
# ----------------------------------------------------------------------------------------
def test_accuracy(tandem, analysis, jit, model, exhaustive):
    name = f"accuracy {analysis} jit={jit} {model}"
    opts = ["-Xjit=" + jit, *MODELS[model], "-Xsample.mode=shadow", "-Xshadow.length=5000", "-Xshadow.load=4",
            "-Xsample.seed=7", "-Xstats"]
    code, rep, so, se = profile(tandem, KNOWN, analysis, opts)
    if not check(f"{name}: runs", code == 0 and rep, se[-800:]):
        return
    doc = th.json_docs(rep)[0]
    st, ends = stats(se)
    if not check(f"{name}: -Xstats shows the shadows", st is not None, se[-800:]):
        return
    forked, analysed = st[0], st[1]
    check(f"{name}: shadows were forked and analysed", forked >= 1 and analysed >= 1, str(st))
    check(f"{name}: the JSON report is a shadow estimate at the coverage -Xstats measured",
          doc.get("shadow") is True and doc.get("estimated") is True
          and abs(doc.get("sample_rate", 0) - st[7]) <= 1e-5 * max(1.0, st[7]), f"{doc.get('sample_rate')} vs {st}")
    frac = doc["sample_rate"]
    actual, sampled = th.items_of(exhaustive, None), th.items_of(doc, None)
    w = th.weighted_error(actual, sampled, frac)
    ov = th.hot_overlap(actual, sampled)
    check.bump("accuracy")
    check(f"{name}: weighted error {w:.4f} at most {MAX_WEIGHTED}", w <= MAX_WEIGHTED, f"coverage {frac}")
    check(f"{name}: hot-item overlap {ov:.2f} at least {MIN_OVERLAP}", ov >= MIN_OVERLAP, f"overlap {ov}")


# ----------------------------------------------------------------------------------------
# exact: one shadow over all of work(), compiled or interpreted
# ----------------------------------------------------------------------------------------
# -Xshadow.length: the first check falls within its first 3/16 (vm_shadow_first_check), inside
# warm()'s 2000000 ticks, and the shadow's window outlasts the rest of the run (~2.4 M ticks)
EXACT_OPTS = ["-Xsample.mode=shadow", "-Xshadow.length=8000000", "-Xshadow.load=1", "-Xsample.seed=3", "-Xstats"]
EXACT_VARIANTS = {"compiled": ["-Xjit=on"], "interpreted": ["-Xjit=on", "-Xsample.windows=interpreted"],
                  "jit off": ["-Xjit=off"]}


def before_fork(key):
    """Whether a profile item belongs to warm() or shadow_exact's main chunk (their calls and
    paths began before the fork): its function (methodcount), callee (callgraph), last context frame
    (calltree) or path's function (pathprof)."""
    name = key if isinstance(key, str) else key[-1] if not isinstance(key[-1], int) else key[0]
    return name.startswith("warm (") or name == "main chunk (shadow_exact.lua)"


def test_exact(tandem, analysis, variant, exhaustive):
    name = f"exact {analysis} {variant}"
    code, rep, so, se = profile(tandem, EXACT, analysis, [*EXACT_VARIANTS[variant], *EXACT_OPTS])
    if not check(f"{name}: runs", code == 0 and rep, se[-800:]):
        return
    st, ends = stats(se)
    w = WINDOWS_RE.search(se)
    if not check(f"{name}: -Xstats shows the shadows and where their windows ran", st is not None and w, se[-800:]):
        return
    check(f"{name}: one shadow, analysed, ended at the side effect",
          st[0] == 1 and st[1] == 1 and ends.get("side effect") == 1, f"{st} {ends}")
    inj, interp = int(w.group(2)), int(w.group(3))
    if variant == "compiled":
        check(f"{name}: the window ran compiled (its ticks all in the twins)",
              w.group(1) == "compiled" and inj > 0 and interp == 0, w.group(0))
    else:
        check(f"{name}: the window ran interpreted", w.group(1) == "interpreted" and inj == 0 and interp > 0, w.group(0))
    got = th.items_of(th.json_docs(rep)[0], None)
    want = {k: v for k, v in exhaustive.items() if not before_fork(k)}
    got = {k: v for k, v in got.items() if not before_fork(k)}
    diff = sorted(((str(k), want.get(k), got.get(k)) for k in set(want) | set(got) if want.get(k) != got.get(k)))
    check.bump("accuracy")
    check(f"{name}: the mix's profile equals the exhaustive one ({len(want)} items)", len(want) >= 5 and not diff,
          str(diff[:6]))


def test_text(tandem):
    code, rep, so, se = profile(tandem, KNOWN, "methodcount", ["-Xsample.mode=shadow", "-Xshadow.length=5000"],
                                fmt="text")
    check("text: the report says it is a shadow estimate with its coverage",
          code == 0 and "estimates from shadow profiling: the shadows covered" in rep, rep[:600] + se[-400:])


# ----------------------------------------------------------------------------------------
# effects and kill
# ----------------------------------------------------------------------------------------
STDIN = "".join(f"input line {i}\n" for i in range(1, 121))


def effects_run(tandem, d, tag, mode, opts):
    """(exit status, stdout, stderr, the file's bytes) of shadow_effects.lua."""
    out = os.path.join(d, f"{tag}.txt")
    args = [*opts, EFFECTS, out] + ([mode] if mode else [])
    code, so, se = run(tandem, args, stdin=STDIN if mode == "stdin" else None)
    data = open(out, "rb").read() if os.path.exists(out) else None
    return code, so, se, data


def test_effects(tandem, mode, analysis):
    name = f"effects {mode or 'files'} {analysis}"
    with tempfile.TemporaryDirectory(prefix="tandem_shadow_fx_") as d:
        c0, so0, se0, f0 = effects_run(tandem, d, "plain", mode, [])
        if not check(f"{name}: the run without shadows", c0 == 0 and f0, se0[-600:]):
            return
        opts = ["-Xprofile=" + analysis, "-Xprofile.out=" + os.path.join(d, "p.out"), "-Xsample.mode=shadow",
                "-Xshadow.length=3000", "-Xshadow.load=4", "-Xstats"]
        c1, so1, se1, f1 = effects_run(tandem, d, "shadowed", mode, opts)
        check(f"{name}: exit status 0", c1 == 0, se1[-600:])
        check(f"{name}: stdout byte for byte the same", so1 == so0, f"{len(so1)} vs {len(so0)} characters")
        check(f"{name}: the file byte for byte the same", f1 == f0, f"{len(f1 or b'')} vs {len(f0)} bytes")
        check(f"{name}: nothing of the shadows on stderr", not [ln for ln in se1.splitlines()
                                                               if not ln.startswith("[stats]")], se1[-600:])
        st, ends = stats(se1)
        if not check(f"{name}: -Xstats shows the shadows", st is not None, se1[-600:]):
            return
        # a shadow still running at the end may be cut (its grace period over on a loaded
        # machine); none may fail or need the watchdog
        check(f"{name}: shadows forked and analysed, none failed or killed",
              st[0] >= 1 and st[1] >= 1 and st[3] == 0 and st[4] == 0 and st[1] + st[2] == st[0], str(st))
        want = {"stdin": "input", "ffi": "ffi"}.get(mode)
        if want:
            check(f"{name}: shadows ended at the {want}", ends.get(want, 0) >= 1, str(ends))


def test_kill_all(tandem):
    """-Xtest.shadow_kill=1: every shadow hangs; the program's output and file intact."""
    name = "kill every 1"
    with tempfile.TemporaryDirectory(prefix="tandem_shadow_kill_") as d:
        c0, so0, se0, f0 = effects_run(tandem, d, "plain", None, [])
        opts = ["-Xprofile=methodcount", "-Xprofile.format=json", "-Xprofile.out=" + os.path.join(d, "p.out"),
                "-Xsample.mode=shadow", "-Xshadow.length=3000", "-Xshadow.load=2", "-Xshadow.timeout=20",
                "-Xtest.shadow_kill=1", "-Xstats"]
        c1, so1, se1, f1 = effects_run(tandem, d, "killed", None, opts)
        check(f"{name}: exit status 0", c1 == 0, se1[-600:])
        check(f"{name}: stdout and file intact", so1 == so0 and f1 == f0 and c0 == 0, se1[-300:])
        st, ends = stats(se1)
        if not check(f"{name}: -Xstats shows the shadows", st is not None, se1[-600:]):
            return
        forked, analysed, dropped, killed, failed, cut = st[:6]
        check(f"{name}: every shadow killed (by the watchdog, or at the end) and dropped",
              forked >= 1 and analysed == 0 and dropped == forked and killed + cut == forked and failed == 0, str(st))
        doc = th.json_docs(open(os.path.join(d, "p.out"), encoding="utf-8").read())[0]
        check(f"{name}: coverage 0, an empty profile", st[7] == 0.0 and not th.items_of(doc, None), str(st))


def test_kill_some(tandem):
    """-Xtest.shadow_kill=2 on a longer run: the watchdog kills the hung ones, the others are
    analysed, the output is intact."""
    name = "kill every 2"
    # ten times the default length (~0.4 s compiled): the default run lasted ~40 ms, and on a
    # fast machine it ended within the watchdog's 30 ms of the first hung shadow, which the
    # end then cut instead
    n = ["3000000"]
    c0, so0, se0 = run(tandem, [KNOWN, *n])
    code, rep, so, se = profile(tandem, KNOWN, "methodcount", ["-Xsample.mode=shadow", "-Xshadow.length=3000",
                                                               "-Xshadow.load=4", "-Xshadow.timeout=30",
                                                               "-Xtest.shadow_kill=2", "-Xstats"], prog_args=n)
    check(f"{name}: runs, output intact", c0 == 0 and code == 0 and so == so0, se[-600:])
    st, ends = stats(se)
    if not check(f"{name}: -Xstats shows the shadows", st is not None, se[-600:]):
        return
    forked, analysed, dropped, killed, failed, cut = st[:6]
    check(f"{name}: every shadow analysed or dropped, the hung ones killed by the watchdog",
          analysed + dropped == forked and killed >= 1 and failed == 0, str(st))
    check(f"{name}: the others analysed", analysed >= 1, str(st))


def test_idle(tandem, how):
    """-Xtest.shadow_idle: shadows that do nothing until the program's end stops them."""
    name = f"idle {how}"
    with tempfile.TemporaryDirectory(prefix="tandem_shadow_idle_") as d:
        c0, so0, se0, f0 = effects_run(tandem, d, "plain", None, [])
        opts = ["-Xprofile=callgraph", "-Xprofile.format=json", "-Xprofile.out=" + os.path.join(d, "p.out"),
                "-Xsample.mode=shadow", "-Xshadow.length=3000", "-Xshadow.load=2", "-Xtest.shadow_idle=" + how, "-Xstats"]
        c1, so1, se1, f1 = effects_run(tandem, d, "idle", None, opts)
        check(f"{name}: exit status 0, stdout and file intact", c1 == 0 and c0 == 0 and so1 == so0 and f1 == f0, se1[-600:])
        st, ends = stats(se1)
        if not check(f"{name}: -Xstats shows the shadows", st is not None, se1[-600:]):
            return
        forked, analysed, dropped = st[:3]
        check(f"{name}: every shadow analysed, ended by the program's end, no event",
              forked >= 1 and analysed == forked and dropped == 0 and ends.get("program end") == forked
              and re.search(r"analysed \d+ \(0 events\)", se1) is not None, se1[-600:])
        doc = th.json_docs(open(os.path.join(d, "p.out"), encoding="utf-8").read())[0]
        check(f"{name}: coverage 0, an empty profile", st[7] == 0.0 and not th.items_of(doc, None), str(st))


# ----------------------------------------------------------------------------------------
# threads
# ----------------------------------------------------------------------------------------
WORKERS = (2, 3, 4)   # shadow_threads.lua's three workers: the first threads it spawns


def thread_shares(doc):
    """{worker thread: its share of the three workers' calls} (the pipeline after them has a
    load of its own, which these shares leave out)."""
    tot = {t["thread"]: sum(n["calls"] for n in t["nodes"]) for t in doc["threads"] if t["thread"] in WORKERS}
    s = sum(tot.values())
    return {k: v / s for k, v in tot.items()} if s else {}


def test_green(tandem, jit, model):
    name = f"threads {model} jit={jit}"
    base = ["-Xjit=" + jit, *(GREEN2 if model == "green2" else MODELS[model])]
    c0, so0, se0 = run(tandem, [*base, THREADS])
    code, rep, so, se = profile(tandem, THREADS, "calltree", [*base])
    if not check(f"{name}: the exhaustive run", c0 == 0 and code == 0 and rep, se[-600:]):
        return
    ex = thread_shares(th.json_docs(rep)[0])
    code, rep, so, se = profile(tandem, THREADS, "calltree", [*base, "-Xsample.mode=shadow", "-Xshadow.length=5000",
                                                              "-Xshadow.load=2", "-Xstats"])
    if not check(f"{name}: runs", code == 0 and rep, se[-600:]):
        return
    check(f"{name}: output intact (the channel pipeline's sum)", so == so0, f"{so!r} vs {so0!r}")
    st, _ = stats(se)
    check(f"{name}: shadows analysed, none failed or killed", st is not None and st[1] >= 1 and st[3] == 0 and st[4] == 0,
          se[-600:])
    w = WINDOWS_RE.search(se)
    check(f"{name}: the shadows' windows ran {'compiled' if jit == 'on' else 'interpreted'}",
          w is not None and (w.group(1) == "compiled" and int(w.group(2)) > 0 if jit == "on"
                             else w.group(1) == "interpreted" and int(w.group(2)) == 0), se[-600:])
    sh = thread_shares(th.json_docs(rep)[0])
    if model == "green2":
        check(f"{name}: every worker seen by the shadows", set(sh) == set(ex) and all(v > 0 for v in sh.values()),
              f"shadow {sh}, exhaustive {ex}")
        return
    off = {k: abs(sh.get(k, 0.0) - ex[k]) for k in ex}
    check(f"{name}: each thread's share of the calls within {SHARE_TOL} of the exhaustive one",
          all(v <= SHARE_TOL for v in off.values()) and set(sh) == set(ex), f"shadow {sh}, exhaustive {ex}")


def test_native(tandem):
    name = "threads native"
    c0, so0, se0 = run(tandem, ["-Xthreads=native", THREADS])
    code, rep, so, se = profile(tandem, THREADS, "methodcount", ["-Xthreads=native", "-Xsample.mode=shadow",
                                                                 "-Xshadow.length=2000", "-Xstats"])
    check(f"{name}: runs, output intact", c0 == 0 and code == 0 and so == so0, se[-600:])
    st, _ = stats(se)
    check(f"{name}: no fork while other native threads ran (checks skipped counted)",
          st is not None and st[6] >= 1, se[-600:])


# ----------------------------------------------------------------------------------------
# options
# ----------------------------------------------------------------------------------------
BAD = [
    (["-Xsample.mode=shadow", "-Xshadow.length=0"], "shadow.length"),
    (["-Xsample.mode=shadow", "-Xshadow.load=0"], "shadow.load"),
    (["-Xsample.mode=shadow", "-Xshadow.load=lots"], "shadow.load"),
    (["-Xsample.mode=shadow", "-Xshadow.timeout=0"], "shadow.timeout"),
    (["-Xshadow.length=100"], "-Xsample.mode=shadow"),
    (["-Xtest.shadow_kill=1"], "-Xsample.mode=shadow"),
    (["-Xtest.shadow_idle=sleep"], "-Xsample.mode=shadow"),
    (["-Xsample.mode=shadow", "-Xtest.shadow_idle=nap"], "test.shadow_idle"),
    (["-Xsample.mode=shadow", "-Xanalysis=sequential"], "sample.mode=shadow"),
]


def test_options(tandem):
    for args, word in BAD:
        code, so, se = run(tandem, ["-Xprofile=methodcount", *args, "known_calls.lua"])
        check(f"options {' '.join(args)}: refused with exit 2, naming {word}", code == 2 and word in se,
              f"exit {code}: {se[-400:]}")
    code, so, se = run(tandem, ["-X"])
    for opt in ("shadow.length", "shadow.load", "shadow.timeout", "test.shadow_kill", "test.shadow_idle"):
        check(f"options: tandem -X lists -X{opt}", code == 0 and ("-X" + opt) in so + se, (so + se)[-300:])
    check("options: tandem -X lists sample.mode's value shadow", "code, shadow" in so + se, (so + se)[-300:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    tandem = os.path.abspath(a.tandem)
    JIT_MODES[:] = th.jit_modes_of(tandem)
    tasks = []

    def accuracy_tasks(analysis):
        code, rep, so, se = profile(tandem, KNOWN, analysis, [])
        if not check(f"accuracy {analysis}: the exhaustive run", code == 0 and rep, se[-800:]):
            return
        ex = th.json_docs(rep)[0]
        for jit in JIT_MODES:
            for model in MODELS:
                test_accuracy(tandem, analysis, jit, model, ex)
    for analysis in ANALYSES:
        tasks.append(lambda an=analysis: accuracy_tasks(an))

    def exact_tasks(analysis):
        code, rep, so, se = profile(tandem, EXACT, analysis, [])
        if not check(f"exact {analysis}: the exhaustive run", code == 0 and rep, se[-800:]):
            return
        ex = th.items_of(th.json_docs(rep)[0], None)
        for variant in EXACT_VARIANTS:
            if "on" in JIT_MODES or variant == "jit off":
                test_exact(tandem, analysis, variant, ex)
    for analysis in ANALYSES:
        tasks.append(lambda an=analysis: exact_tasks(an))
    tasks.append(lambda: test_text(tandem))
    for mode, analysis in ((None, "callgraph"), ("stdin", "calltree"), ("ffi", "pathprof"), (None, "cachesim")):
        tasks.append(lambda m=mode, an=analysis: test_effects(tandem, m, an))
    tasks.append(lambda: test_kill_all(tandem))
    tasks.append(lambda: test_kill_some(tandem))
    for how in ("sleep", "spin"):
        tasks.append(lambda h=how: test_idle(tandem, h))
    for jit in JIT_MODES:
        for model in ("green1", "green2"):
            tasks.append(lambda j=jit, m=model: test_green(tandem, j, m))
    tasks.append(lambda: test_native(tandem))
    tasks.append(lambda: test_options(tandem))
    check.run_tasks(tasks, a.jobs)
    n = check.counts
    return check.finish(f"{n['checks']} checks, {n['runs']} runs, {n['accuracy']} accuracy comparisons")


if __name__ == "__main__":
    raise SystemExit(main())
