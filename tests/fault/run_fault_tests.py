#!/usr/bin/env python3
"""Fault injection end to end (issue 22): every run has a watchdog (a timeout after which it
counts as a hang and is killed), and ctest's TIMEOUT watches the whole runner.

  stall    -Xtest.analyzer_stall: analyzer 0 sleeps 1 s once while producers block on the
           smallest ring: the program's output and the profile are those of the sequential
           analysis, produced == consumed (-Xstats).
  die      -Xtest.analyzer_die=N (N = 1, 5, 40; one and two analyzers; native and green
           threads): the rings move to another analyzer or to a spare thread; same checks, and
           stderr says so. The profile is complete (not partial): nothing was lost.
  oom      -Xtest.alloc_fail=N for N in the first allocations (startup) and 40 N drawn with a
           fixed seed over the run (plain, green threads, profiled): exit 0 with the whole
           output or a caught "not enough memory", or exit 1 with "not enough memory" on
           stderr; never a signal, never a hang.
  full     -Xprofile.out=/dev/full: "tandem: cannot write the profile to /dev/full: No space
           left on device", the program's stdout unchanged, exit 1 (a failing program keeps
           its own status), /dev/full still a device; a write that fails on a regular file
           (RLIMIT_FSIZE, EFBIG) leaves the old file whole and no temporary file.
  signals  SIGINT or SIGTERM at a random moment (fixed seed; 0 to 0.8 s after the program's
           first line: threads starting, running, analysers stalled) of a profiled run of four
           threads that never ends (native and green; json and text; plain, smallest ring,
           stalled analyzer, dying analyzer): the process dies of that signal, and the profile
           is whole (JSON parses, text has its total line), marked partial, no temporary file.

    PYTHONPATH=pylib python3 tests/fault/run_fault_tests.py --tandem build/tandem [--seed S]
           [--iterations N] [--only stall,die,oom,full,signals]
"""
import argparse
import os
import random
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
WATCHDOG = 30  # seconds: a run that takes longer is a hang
check = th.Checks()


def run(tandem, args, timeout=WATCHDOG, **kw):
    """(code, out, err) of tandem [args] in this folder; code None after the watchdog."""
    try:
        p = subprocess.run([tandem, *args], cwd=HERE, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace"), (e.stderr or b"").decode(errors="replace")
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def methodcount(report):
    try:
        return th.parse_methodcount(report)
    except (StopIteration, AttributeError, KeyError, AssertionError):
        return None


def reference(tandem, threads):
    code, out, err = run(tandem, ["-Xprofile=methodcount", "-Xanalysis=sequential", f"-Xthreads={threads}", "work.lua"])
    return out, methodcount(err)


def concurrent_matches(tandem, name, threads, opts, ref, expect_note=None):
    code, out, err = run(tandem, ["-Xprofile=methodcount", "-Xstats", *th.SMALL_RING, f"-Xthreads={threads}", *opts,
                                  "work.lua"])
    if not check(f"{name}: ends (watchdog {WATCHDOG} s)", code is not None, err[-300:]):
        return
    check(f"{name}: exit 0", code == 0, (code, err[-300:]))
    check(f"{name}: program output", out == ref[0], out)
    mc = methodcount(err)
    check(f"{name}: profile == sequential", mc is not None and mc == ref[1], (mc, ref[1]))
    check(f"{name}: not partial", "partial" not in err, err[:300])
    stats = th.parse_stats(err)
    check(f"{name}: produced == consumed", stats.total is not None and th.nothing_lost(stats.total), stats.total)
    if expect_note:
        check(f"{name}: stderr says '{expect_note}'", expect_note in err, err[:300])


def test_stall(tandem):
    for threads in ("native", "green"):
        ref = reference(tandem, threads)
        t0 = time.monotonic()
        concurrent_matches(tandem, f"stall {threads}", threads, ["-Xtest.analyzer_stall=1000"], ref)
        check(f"stall {threads}: took the stall", time.monotonic() - t0 >= 1.0, time.monotonic() - t0)


def test_die(tandem):
    for threads in ("native", "green"):
        ref = reference(tandem, threads)
        for analyzers in (1, 2):
            for n in (1, 5, 40):
                # Green threads on two analyzers: one carrier (two cores), whose ring may go to
                # analyzer 1, leaving analyzer 0 the main thread's few chunks: it may not die.
                note = "cab: analyzer 0 stopped" if analyzers == 1 or threads == "native" else None
                concurrent_matches(tandem, f"die after {n} {threads} {analyzers} analyzer(s)", threads,
                                   [f"-Xanalyzers={analyzers}", f"-Xtest.analyzer_die={n}"], ref, note)


def oom_run(tandem, name, n, opts):
    code, out, err = run(tandem, [f"-Xtest.alloc_fail={n}", *opts, "oom.lua"])
    if not check(f"{name}: ends (watchdog {WATCHDOG} s)", code is not None, err[-300:]):
        return None
    check(f"{name}: no crash", code in (0, 1), (code, err[-500:]))
    if code == 0:
        check(f"{name}: whole output", out.endswith("done\t200\n"), out[-200:])
    elif code == 1:
        check(f"{name}: says not enough memory", "not enough memory" in err, err[-300:])
    return "caught" if "caught not enough memory" in out else "exit" if code == 1 else "ok"


def test_oom(tandem, rnd):
    for n in range(1, 12):  # the first allocations: the VM state itself
        oom_run(tandem, f"alloc_fail={n} (startup)", n, [])
    for opts in ([], ["-Xthreads=green"], ["-Xprofile=methodcount,callgraph", *th.SMALL_RING]):
        seen = set()
        for n in sorted(rnd.sample(range(12, 12000), 40)):
            seen.add(oom_run(tandem, f"alloc_fail={n} {' '.join(opts)}", n, opts))
        check(f"alloc_fail {' '.join(opts)}: some failure caught by pcall", "caught" in seen, seen)


def test_full(tandem):
    code0, out0, _ = run(tandem, ["work.lua"])
    msg = "tandem: cannot write the profile to /dev/full: No space left on device"
    for fmt in ("text", "json"):
        code, out, err = run(tandem, ["-Xprofile=methodcount,callgraph", f"-Xprofile.format={fmt}",
                                      "-Xprofile.out=/dev/full", "work.lua"])
        name = f"/dev/full {fmt}"
        check(f"{name}: program output unchanged", out == out0 and code0 == 0, out)
        check(f"{name}: reported", msg in err, err[-300:])
        check(f"{name}: exit 1", code == 1, code)
        check(f"{name}: still a device", stat.S_ISCHR(os.stat("/dev/full").st_mode), oct(os.stat("/dev/full").st_mode))
    code, out, err = run(tandem, ["-Xprofile=methodcount", "-Xprofile.out=/dev/full", "-e", "error('boom')"])
    check("/dev/full, failing program: its own status and both messages", code == 1 and msg in err and "boom" in err,
          (code, err))
    # A regular file whose write fails (EFBIG: a file size limit of 64 bytes) keeps its old
    # contents, and no temporary file is left beside it.
    d = tempfile.mkdtemp(prefix="tandem_fault_")
    path = os.path.join(d, "profile.txt")
    with open(path, "w") as f:
        f.write("old\n")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    code, out, err = run(tandem, ["-Xprofile=methodcount", f"-Xprofile.out={path}", "work.lua"], preexec_fn=limit)
    check("EFBIG: reported", f"cannot write the profile to {path}: File too large" in err, err[-300:])
    check("EFBIG: exit 1, output unchanged", code == 1 and out == out0, (code, out))
    check("EFBIG: old file kept", open(path).read() == "old\n", open(path).read()[:100])
    check("EFBIG: no temporary file", os.listdir(d) == ["profile.txt"], os.listdir(d))


def check_profile(name, path, fmt):
    try:
        text = open(path).read()
    except OSError as e:
        check(f"{name}: profile written", False, e)
        return
    if fmt == "json":
        try:
            docs = th.load_profile(path)
        except ValueError as e:
            check(f"{name}: json parses", False, e)
            return
        check(f"{name}: both analyses", [x.get("analysis") for x in docs] == ["methodcount", "callgraph"], docs)
        check(f"{name}: marked partial", all(x.get("partial") is True for x in docs), [x.get("partial") for x in docs])
    else:
        check(f"{name}: text parses", methodcount(text) is not None, text[-300:])
        check(f"{name}: text ends with its total line", text.endswith("total\n"), text[-200:])
        check(f"{name}: marked partial", "partial profile" in text, text[:300])


def test_signals(tandem, rnd, iterations):
    extras = [[], th.SMALL_RING, ["-Xtest.analyzer_stall=300"], ["-Xanalyzers=2", "-Xtest.analyzer_die=3"]]
    for i in range(iterations):
        sig = rnd.choice([signal.SIGINT, signal.SIGTERM])
        threads = rnd.choice(["native", "green"])
        fmt = rnd.choice(["json", "text"])
        extra = extras[i % len(extras)]
        delay = rnd.uniform(0.0, 0.8)
        name = f"signals #{i} {signal.Signals(sig).name} after {delay:.3f} s {threads} {fmt} {' '.join(extra)}"
        d = tempfile.mkdtemp(prefix="tandem_fault_sig_")
        path = os.path.join(d, "profile.out")
        p = subprocess.Popen([tandem, "-Xprofile=methodcount" + (",callgraph" if fmt == "json" else ""),
                              f"-Xprofile.format={fmt}", f"-Xprofile.out={path}", f"-Xthreads={threads}", *extra,
                              "forever.lua"], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = p.stdout.readline()  # "start": the runtime is up, the program has begun
        time.sleep(delay)
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=WATCHDOG)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            check(f"{name}: ends (watchdog {WATCHDOG} s)", False, err[-300:])
            continue
        check(f"{name}: started", first == b"start\n", first)
        check(f"{name}: dies of the signal", p.returncode in (-sig, 128 + sig), (p.returncode, err[-300:]))
        check(f"{name}: no temporary file", os.listdir(d) == ["profile.out"], os.listdir(d))
        check_profile(name, path, fmt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--iterations", type=int, default=16)
    ap.add_argument("--only", default="stall,die,oom,full,signals")
    a = ap.parse_args()
    tandem = th.find_tandem(a.tandem, required=True)
    rnd = random.Random(a.seed)
    only = a.only.split(",")
    t0 = time.monotonic()
    if "stall" in only:
        test_stall(tandem)
    if "die" in only:
        test_die(tandem)
    if "oom" in only:
        test_oom(tandem, rnd)
    if "full" in only:
        test_full(tandem)
    if "signals" in only:
        test_signals(tandem, rnd, a.iterations)
    return check.finish(f"fault injection, seed {a.seed}, {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
