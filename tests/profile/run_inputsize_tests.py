#!/usr/bin/env python3
"""-Xprofile=inputsize against input sizes known by construction (known_inputsize.lua).

  sum        sum(a, n) for n = 1..N: one point per size n with RMS = TRMS = n, one call each,
             cost exactly linear (equal steps between sizes), fitted model "n" with R^2 = 1.
  iter       the same sums through ipairs and pairs: the slots the iterators read are cells
             (RMS = TRMS = n + 1: the global ipairs or pairs is read too; model n).
  bytes      a count over a string's bytes with string.byte: each byte returned is a cell
             (RMS = TRMS = length, model n).
  isort      insertion sort of reversed arrays of n = 1..N: TRMS = RMS = n (0 for n = 1, which
             reads nothing), model "n^2", and a cost whose second difference is constant.
  wbr        a function that writes cells, then reads them: every activation has size 0.
  prodcons   the paper's figure 2 under native threads (one stream each: the analysis orders
             them by EV_SYNC numbers) and green threads on one and on two carriers: the
             consumer's RMS is 1 and its TRMS n, all of it thread-induced; the producer's
             input is 0; the same profile under all three.
  lines      reading n lines of a file in one activation: RMS 1, TRMS n, all external.
  equal      every case's JSON profile is the same sequential, concurrent, concurrent on the
             smallest ring, with the JIT and without (costs in instructions, sizes in cells:
             deterministic); -Xstats: produced == consumed.
  text       the text report ranks by growth (isort's n^2 above sum's n) and agrees with JSON.
  plots      profilers/tools/inputsize_plot.py runs the program and writes isort's plot, SVG
             and PNG, listed in index.txt with its n^2 fit (skipped without gnuplot).
  threads    every tests/threads program with an expected output runs under the analysis,
             native and green, sequential and concurrent, and prints what it expects (the
             world's queues never stall a program, and every queue drains at the end).
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

import tandem_harness as th
from tandem_harness import json_docs, mode_opts

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, "known_inputsize.lua")
N = 60
MODES = ("sequential", "concurrent", "small")
check = th.Checks()


def profile(tandem, case, mode, jit="on", fmt="json", extra=(), args=()):
    """Runs known_inputsize.lua [case] and returns (stdout, report)."""
    with tempfile.TemporaryDirectory(prefix="tandem_inputsize_") as d:
        out = os.path.join(d, "profile.out")
        argv = th.tandem_argv(tandem, *mode_opts(mode), f"-Xjit={jit}", "-Xprofile=inputsize",
                              f"-Xprofile.format={fmt}", f"-Xprofile.out={out}", *extra, PROG, case, *args)
        r = th.run_once(argv, cwd=d, timeout=300)
        name = f"{case} {mode} jit={jit}"
        if not check(f"{name}: exit 0", r.code == 0, r.err[-2000:]):
            return r.out, ""
        if mode != "sequential":
            t = th.parse_stats(r.err).total
            check(f"{name}: produced == consumed", t is not None and th.nothing_lost(t), r.err[-800:])
        rep = open(out).read() if os.path.exists(out) else ""
        check(f"{name}: report written", rep != "")
        return r.out, rep


def comparable(rep):
    """The report without "queue_bytes" (how far one stream ran ahead of another depends on
    timing; everything else is deterministic)."""
    return re.sub(r'"queue_bytes":\d+,', "", rep)


def functions(rep):
    docs = json_docs(rep)
    assert len(docs) == 1 and docs[0]["analysis"] == "inputsize", docs
    return {f["function"].split(" (")[0]: f for f in docs[0]["functions"]}


def points(f, which):
    return [tuple(p) for p in f[which]["points"]]


def check_sum(fs):
    f = fs.get("sum")
    if not check("sum: reported", f is not None, sorted(fs)):
        return
    for which in ("trms_fit", "rms_fit"):
        pts = points(f, which)
        check(f"sum {which}: sizes 1..N, one call each", [(p[0], p[1]) for p in pts] == [(n, 1) for n in range(1, N + 1)],
              pts[:5])
        steps = {pts[i + 1][3] - pts[i][3] for i in range(len(pts) - 1)}
        check(f"sum {which}: cost exactly linear (one step)", len(steps) == 1 and steps.pop() > 0, steps)
        check(f"sum {which}: model n, R^2 = 1", f[which]["model"] == "n" and f[which]["r2"] > 1 - 1e-9, f[which]["model"])
    check("sum: trms total = rms total = N(N+1)/2", f["trms"] == f["rms"] == N * (N + 1) // 2, (f["trms"], f["rms"]))
    check("sum: no induced input", f["induced_thread"] == 0 and f["induced_external"] == 0, f)


def check_iter(fs):
    for name in ("sum_ipairs", "sum_pairs"):
        f = fs.get(name)
        if not check(f"iter: {name} reported", f is not None, sorted(fs)):
            continue
        for which in ("trms_fit", "rms_fit"):
            pts = points(f, which)
            # n slots and the global ipairs / pairs (a slot of _ENV: input too)
            check(f"iter {name} {which}: sizes 2..N+1, one call each",
                  [(p[0], p[1]) for p in pts] == [(n + 1, 1) for n in range(1, N + 1)], pts[:5])
            check(f"iter {name} {which}: model n", f[which]["model"] == "n" and f[which]["r2"] > 0.9999,
                  (f[which]["model"], f[which]["r2"]))


def check_bytes(fs):
    f = fs.get("count_byte")
    if check("bytes: count_byte reported", f is not None, sorted(fs)):
        for which in ("trms_fit", "rms_fit"):
            pts = points(f, which)
            check(f"bytes {which}: sizes 1..N (the bytes string.byte returned)",
                  [(p[0], p[1]) for p in pts] == [(n, 1) for n in range(1, N + 1)], pts[:5])
            check(f"bytes {which}: model n", f[which]["model"] == "n" and f[which]["r2"] > 0.999,
                  (f[which]["model"], f[which]["r2"]))


def check_isort(fs):
    f = fs.get("isort")
    if not check("isort: reported", f is not None, sorted(fs)):
        return
    for which in ("trms_fit", "rms_fit"):
        pts = points(f, which)
        # n = 1 reads nothing (the outer loop starts at 2)
        check(f"isort {which}: sizes 0, 2..N", [p[0] for p in pts] == [0] + list(range(2, N + 1)), pts[:5])
        check(f"isort {which}: model n^2", f[which]["model"] == "n^2" and f[which]["r2"] > 0.999,
              (f[which]["model"], f[which]["r2"]))
    # A second computation of the cost: each inner-loop step is the same instructions, so the
    # second differences of the mean cost over n (reversed input: n-1 more steps) are constant.
    c = [p[3] for p in points(f, "trms_fit")]
    d2 = {c[i + 2] - 2 * c[i + 1] + c[i] for i in range(1, len(c) - 2)}
    check("isort: cost exactly quadratic (constant second difference)", len(d2) == 1 and d2.pop() > 0, d2)


def check_wbr(fs):
    f = fs.get("wbr")
    if check("wbr: reported", f is not None, sorted(fs)):
        for which in ("trms_fit", "rms_fit"):
            pts = points(f, which)
            check(f"wbr {which}: written before read is no input", [(p[0], p[1]) for p in pts] == [(0, N)], pts)


def check_prodcons(fs):
    c, p = fs.get("consumer"), fs.get("producer")
    if not check("prodcons: both reported", c is not None and p is not None, sorted(fs)):
        return
    check("prodcons: consumer RMS 1", points(c, "rms_fit") and [x[0] for x in points(c, "rms_fit")] == [1],
          points(c, "rms_fit"))
    check("prodcons: consumer TRMS n", [x[0] for x in points(c, "trms_fit")] == [N], points(c, "trms_fit"))
    check("prodcons: all of it thread-induced", c["induced_thread"] == N and c["induced_external"] == 0, c)
    check("prodcons: producer has no input", [x[0] for x in points(p, "trms_fit")] == [0], points(p, "trms_fit"))


def check_lines(fs):
    f = fs.get("readlines")
    if check("lines: reported", f is not None, sorted(fs)):
        check("lines: RMS 1", [x[0] for x in points(f, "rms_fit")] == [1], points(f, "rms_fit"))
        check("lines: TRMS n", [x[0] for x in points(f, "trms_fit")] == [N], points(f, "trms_fit"))
        check("lines: all of it external", f["induced_external"] == N and f["induced_thread"] == 0, f)


CASES = {
    "sum": ([], check_sum),
    "iter": ([], check_iter),
    "bytes": ([], check_bytes),
    "isort": ([], check_isort),
    "wbr": ([], check_wbr),
    "prodcons": ([], check_prodcons),
    "prodcons green1": (["-Xthreads=green", "-Xcarriers=1"], check_prodcons),
    "prodcons green2": (["-Xthreads=green", "-Xcarriers=2"], check_prodcons),
    "lines": ([], check_lines),
}


def check_plots(tandem):
    """profilers/tools/inputsize_plot.py, one command from the program to its plots."""
    if shutil.which("gnuplot") is None:
        print("note: gnuplot missing, inputsize_plot.py not checked (scripts/setup.sh installs gnuplot-nox)")
        return
    tool = os.path.join(HERE, "..", "..", "profilers", "tools", "inputsize_plot.py")
    with tempfile.TemporaryDirectory(prefix="tandem_inputsize_plots_") as d:
        for fmt in ("svg", "png"):
            out = os.path.join(d, fmt)
            r = th.run_once([sys.executable, tool, "--tandem", tandem, "--format", fmt, "--out", out, "--",
                             PROG, "isort", str(N)], timeout=300)
            if not check(f"plot {fmt}: exit 0", r.code == 0, r.err[-1500:]):
                continue
            index = open(os.path.join(out, "index.txt")).read()
            check(f"plot {fmt}: isort plotted first, n^2", index.startswith("01-isort." + fmt) and "TRMS n^2" in index,
                  index)
            data = open(os.path.join(out, "01-isort." + fmt), "rb").read()
            check(f"plot {fmt}: a {fmt} file", data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data[:2000],
                  data[:80])


def check_threads(tandem):
    tdir = os.path.join(HERE, "..", "threads")
    for name in sorted(os.listdir(tdir)):
        base, ext = os.path.splitext(name)
        if ext != ".lua" or not os.path.exists(os.path.join(tdir, base + ".expected")):
            continue
        if any(os.path.exists(os.path.join(tdir, base + e)) for e in (".status", ".stderr")):
            continue
        want = open(os.path.join(tdir, base + ".expected")).read()
        optf = os.path.join(tdir, base + ".opts")
        opts = open(optf).read().split() if os.path.exists(optf) else []
        for model in ("native", "green"):
            for mode in ("sequential", "concurrent"):
                with tempfile.TemporaryDirectory(prefix="tandem_inputsize_") as d:
                    argv = th.tandem_argv(tandem, *mode_opts(mode), f"-Xthreads={model}", "-Xprofile=inputsize",
                                          f"-Xprofile.out={os.path.join(d, 'p.out')}", *opts, name)
                    r = th.run_once(argv, cwd=tdir, timeout=300)
                    ok = check(f"threads {base} {model} {mode}: exit 0, expected output",
                               r.code == 0 and r.out == want, f"code {r.code} {r.err[-800:]}")
                    if ok and mode == "concurrent":
                        t = th.parse_stats(r.err).total
                        check(f"threads {base} {model} {mode}: produced == consumed",
                              t is not None and th.nothing_lost(t), r.err[-800:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem_inputsize_data_") as d:
        lines = os.path.join(d, "lines.txt")
        with open(lines, "w") as fh:
            fh.writelines(f"line {i}\n" for i in range(2 * N))
        prodcons_ref = None
        for label, (extra, fn) in CASES.items():
            case = label.split()[0]
            args = [str(N)] + ([lines] if case == "lines" else [])
            ref = None
            for mode in MODES:
                for jit in ("off", "on"):
                    out, rep = profile(a.tandem, case, mode, jit, extra=extra, args=args)
                    if not rep:
                        continue
                    try:
                        fs = functions(rep)
                    except (ValueError, AssertionError) as e:
                        check(f"{case} {mode} jit={jit}: one inputsize JSON document", False, str(e))
                        continue
                    rep = comparable(rep)
                    if ref is None:
                        ref = rep
                        fn(fs)
                    else:
                        check(f"{label} {mode} jit={jit} == sequential jit=off", rep == ref,
                              f"\n{rep[:1500]}\n!=\n{ref[:1500]}")
            if case == "prodcons" and ref:
                prodcons_ref = prodcons_ref or ref
                check(f"{label} == prodcons native", ref == prodcons_ref, f"\n{ref[:1500]}\n!=\n{prodcons_ref[:1500]}")
        check_threads(a.tandem)
        # The text report: ranked by growth, the same numbers as JSON.
        _, txt = profile(a.tandem, "isort", "sequential", fmt="text", args=[str(N)])
        rows = [l for l in txt.splitlines() if l.startswith(("n^2 ", "n ", "- "))]
        check("text: isort first, as n^2", rows and rows[0].startswith("n^2") and "isort" in rows[0], txt[:1500])
        _, txt = profile(a.tandem, "sum", "sequential", fmt="text", args=[str(N)])
        srow = [l for l in txt.splitlines() if "sum (" in l]
        check("text: sum as n, N calls, max TRMS N", srow and srow[0].split()[0] == "n" and
              srow[0].split()[2:5] == [str(N), str(N), str(N)], srow)
        check_plots(a.tandem)
    return check.finish(f"inputsize: {check.counts['checks']} checks")


if __name__ == "__main__":
    sys.exit(main())
