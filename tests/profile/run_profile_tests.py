#!/usr/bin/env python3
"""Profiling end to end: method counting on programs of known shape. Checks the exact counts,
that the concurrent report (default ring and the smallest valid one, which makes the producer
block and wrap many times) equals the sequential one exactly, that a program failing with an
uncaught error or leaving through os.exit still writes its whole profile, and that bad option
values exit 2 with a message."""
import os
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL_RING = th.SMALL_RING


THREAD_PROGRAMS = "spawn_tree.lua,pipeline.lua,mutex_counter.lua,basics.lua"


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--thread-programs", default=THREAD_PROGRAMS,
                    help="the tests/threads programs profiled under every thread model (comma-separated; "
                         "the TSan build names fewer: tests/README.md, \"Sanitizers\")")
    a = ap.parse_args()
    run = th.tandem_runner(th.find_tandem(a.tandem, required=True), cwd=HERE, timeout=120, with_extra_args=True)
    check = th.Checks()
    tmp = tempfile.mkdtemp(prefix="tandem_profile_")
    expected = {"f (shape.lua:4)": 1000, "g (shape.lua:5)": 250, "h (shape.lua:6)": 10,
                "k (shape.lua:7)": 100000, "main chunk (shape.lua)": 1,
                "function <shape.lua:11>": 1,     # the coroutine's body
                "function <shape.lua:15>": 100}   # the __add metamethod

    reports = {}
    modes = {
        "sequential": ["-Xanalysis=sequential"],
        "concurrent": ["-Xanalysis=concurrent"],
        "concurrent-default": [],
        "concurrent-small": ["-Xanalysis=concurrent", *SMALL_RING],
    }
    for mode, extra in modes.items():
        code, out, err = run("-Xprofile=methodcount", *extra, "shape.lua")
        check(f"{mode}: exit", code == 0 and out == "done\n", f"{code} {out!r} {err!r}")
        reports[mode] = err
        # The same run with -Xstats: every event produced was consumed.
        code2, _, err2 = run("-Xprofile=methodcount", "-Xstats", *extra, "shape.lua")
        t = th.parse_stats(err2).total
        check(f"{mode}: produced == consumed", code2 == 0 and th.nothing_lost(t), t["line"] if t else err2[-1000:])
        try:
            counts, total, nfun = th.parse_methodcount(err)
        except (StopIteration, AttributeError, KeyError, AssertionError) as e:
            check(f"{mode}: report", False, f"{e!r} {err!r}")
            continue
        for name, n in expected.items():
            check(f"{mode}: {name}", counts.get(name) == n, f"got {counts.get(name)}")
        check(f"{mode}: nothing else", counts == expected, counts)
        check(f"{mode}: total", total == sum(counts.values()), f"{total} {counts}")
        check(f"{mode}: functions", nfun == len(counts), f"{nfun} {counts}")
    for mode in modes:
        check(f"{mode} == sequential", reports[mode] == reports["sequential"],
              f"\n{reports[mode]}\n--- vs ---\n{reports['sequential']}")

    # -Xprofile.out: the same report, in a file, and nothing on stderr.
    for mode in ("sequential", "concurrent"):
        path = os.path.join(tmp, f"shape-{mode}.prof")
        code, out, err = run("-Xprofile=methodcount", f"-Xanalysis={mode}", f"-Xprofile.out={path}",
                             "shape.lua")
        body = open(path).read() if os.path.exists(path) else None
        check(f"profile.out {mode}", code == 0 and err == "" and body == reports["sequential"],
              f"{code} {err!r} {body!r}")
        check(f"profile.out {mode}: no temp file left", os.listdir(tmp).count(os.path.basename(path)) == 1 and
              not any(n.startswith(os.path.basename(path) + ".tmp") for n in os.listdir(tmp)), os.listdir(tmp))

    # A failing program still writes its whole profile, and exits 1.
    for mode, extra in modes.items():
        path = os.path.join(tmp, f"fails-{mode}.prof")
        code, out, err = run("-Xprofile=methodcount", *extra, f"-Xprofile.out={path}", "fails.lua")
        check(f"fails {mode}: exit 1 with the error", code == 1 and "boom" in err, f"{code} {err!r}")
        if os.path.exists(path):
            counts = th.parse_methodcount(open(path).read())[0]
            check(f"fails {mode}: counts", counts.get("f (fails.lua:3)") == 10 and
                  counts.get("main chunk (fails.lua)") == 1, counts)
        else:
            check(f"fails {mode}: profile written", False, path)
        path = os.path.join(tmp, f"exits-{mode}.prof")
        code, out, err = run("-Xprofile=methodcount", *extra, f"-Xprofile.out={path}", "exits.lua")
        check(f"os.exit {mode}: exit 0", code == 0, f"{code} {err!r}")
        if os.path.exists(path):
            counts = th.parse_methodcount(open(path).read())[0]
            check(f"os.exit {mode}: counts", counts.get("f (exits.lua:2)") == 5, counts)
        else:
            check(f"os.exit {mode}: profile written", False, path)

    # Threads: every language thread (native) or carrier (green) has its own stream; the
    # merged profile equals the sequential one, and -Xstats shows produced == consumed.
    threads_dir = os.path.join(HERE, "..", "threads")
    models = {"native": ["-Xthreads=native"], "green1": ["-Xthreads=green", "-Xcarriers=1"],
              "green4": ["-Xthreads=green", "-Xcarriers=4"]}
    for prog in a.thread_programs.split(","):
        for model, margs in models.items():
            seq = None
            for mode, extra in (("sequential", ["-Xanalysis=sequential"]), ("concurrent", []),
                                ("concurrent-small", SMALL_RING)):
                code, _, err = run("-Xprofile=methodcount", "-Xstats", *margs, *extra, prog,
                                   cwd=threads_dir, timeout=300)
                name = f"threads {prog} {model} {mode}"
                check(f"{name}: exit", code == 0, f"{code} {err[-2000:]!r}")
                try:
                    counts = th.parse_methodcount(err)[0]
                except (StopIteration, AttributeError, KeyError, AssertionError) as e:
                    check(f"{name}: report", False, f"{e!r} {err[-2000:]!r}")
                    continue
                if seq is None:
                    seq = counts
                check(f"{name} == sequential", counts == seq, f"{counts} vs {seq}")
                t = th.parse_stats(err).total
                check(f"{name}: produced == consumed", th.nothing_lost(t), t["line"] if t else err[-1000:])

    # The deadlock test: analyzers slowed on purpose so producers block on full rings all
    # the time, while other threads allocate and force collections. It must finish (the
    # subprocess timeout is the watchdog) with nothing lost.
    # Every full-ring policy (-Xcab.full): with self the program threads analyse chunks.
    # The delay (2 ms a chunk) keeps the analyzer well behind the producer in every build: at
    # 0.2 ms a TSan build's producer (about 2 ms a chunk itself) filled the ring only 7 times
    # in a green1 full=self run on CI, and the test then exercised nothing.
    for model, margs in models.items():
        for full in th.FULL_RING:
            name = f"deadlock {model} full={full}"
            code, out, err = run("-Xprofile=methodcount", "-Xstats", *margs, *SMALL_RING, f"-Xcab.full={full}",
                                 "-Xtest.analyzer_delay=2000", "deadlock.lua")
            if code is None:
                check(name, False, "hung (watchdog: 120 s)")
                continue
            t = th.parse_stats(err).total
            check(f"{name}: finished", code == 0 and out == "done\t800400\n",
                  f"{code} {out!r} {err[-1500:]!r}")
            check(f"{name}: nothing lost, producers blocked",
                  th.nothing_lost(t) and t["blocks"] > 100, t["line"] if t else err[-1500:])
            if t:
                want = {"block": t["self_chunks"] == 0, "self": t["self_chunks"] > 0}.get(full, True)
                check(f"{name}: chunks analysed by the program threads", want, t["line"])
            counts = th.parse_methodcount(err)[0]
            check(f"{name}: counts", counts.get("f (deadlock.lua:3)") == 800000, counts)

    # Heap loads and stores never wait between safepoints: with a ring full most of the time,
    # every EV_LOAD/EV_STORE finds the room reserved at the safepoint before it, in compiled
    # code (its inline reservations) and in the interpreter.
    # (jit=on is skipped when $TANDEM_EXTRA_ARGS turns the JIT off: th.extra_args)
    built_jit = "built without the JIT" not in run("-X")[1] and not th.jit_turned_off()
    for model in ("native", "green"):
        for jit in ("on", "off") if built_jit else ("off",):
            code, out, err = run(f"-Xjit={jit}", "-Xprofile=cachesim", "-Xprofile.out=/dev/null", "-Xstats",
                                 f"-Xthreads={model}", *SMALL_RING, "-Xtest.analyzer_delay=100", "mem_heavy.lua")
            t = th.parse_stats(err).total
            check(f"mem_heavy {model} jit={jit}: ran", code == 0 and out == "371405597\n",
                  f"{code} {out!r} {err[-1500:]!r}")
            check(f"mem_heavy {model} jit={jit}: ring full often, nothing lost, no wait outside a safepoint",
                  th.nothing_lost(t) and t["blocks"] > 100 and t["waits_outside"] == 0,
                  t["line"] if t else err[-1500:])

    # Bad values: exit 2, a message naming the option and what is valid.
    bad = [
        (["-Xprofile=nope"], ["'nope'", "methodcount"]),
        (["-Xprofile=methodcount,nope"], ["'nope'", "methodcount"]),
        (["-Xprofile="], ["-Xprofile", "methodcount"]),
        (["-Xanalysis=parallel"], ["'parallel'", "concurrent", "sequential"]),
        (["-Xanalysis"], ["-Xanalysis", "concurrent"]),
        (["-Xcab.size=12q"], ["-Xcab.size", "'12q'"]),
        (["-Xcab.chunk=0"], ["-Xcab.chunk"]),
        (["-Xprofile=methodcount", "-Xcab.chunk=3000"], ["power of two"]),
        (["-Xprofile=methodcount", "-Xcab.size=13k", "-Xcab.chunk=4k"], ["cab"]),
        (["-Xprofile=methodcount", "-Xcab.size=8k", "-Xcab.chunk=4k"], ["cab"]),
        (["-Xprofile.out="], ["-Xprofile.out"]),
        (["-Xprofile.stage=most"], ["-Xprofile.stage", "instrument", "communicate"]),
        (["-Xbuffer=ring"], ["-Xbuffer", "nway", "ffwd"]),
        (["-Xcab.mode=some"], ["-Xcab.mode", "sampling"]),
        (["-Xsample.rate=0"], ["-Xsample.rate"]),
        (["-Xsample.rate=150%"], ["-Xsample.rate"]),
        (["-Xsample.burst=12"], ["-Xsample.burst"]),
        (["-Xtest.analyzer_delay=-1"], ["-Xtest.analyzer_delay"]),
        (["-Xthreads=fibers"], ["-Xthreads", "green"]),
        (["-Xcarriers=0"], ["-Xcarriers"]),
        (["-Xanalyzers=x"], ["-Xanalyzers"]),
        (["-Xaffinity=some"], ["-Xaffinity", "auto", "none"]),
        (["-Xprofile=methodcount", "-Xanalysis=sequential", "-Xprofile.stage=enqueue"],
         ["-Xprofile.stage=enqueue", "-Xanalysis=concurrent"]),
        (["-Xprofile=methodcount", "-Xanalysis=sequential", "-Xprofile.stage=communicate"],
         ["-Xprofile.stage=communicate", "-Xanalysis=concurrent"]),
        (["-Xpathprof.limit=1"], ["-Xpathprof.limit", "2 .. 4294967295"]),
        (["-Xcachesim.l1=33k:4"], ["-Xcachesim.l1", "power-of-two"]),
        (["-Xcachesim.l2=512k"], ["-Xcachesim.l2", "SIZE:WAYS"]),
    ]
    for args, words in bad:
        code, out, err = run(*args, "shape.lua")
        check(f"bad {' '.join(args)}", code == 2 and out == "" and all(w in err for w in words),
              f"{code} {out!r} {err!r}")

    # The options are listed.
    code, out, err = run("-X")
    check("-X lists the profile options", code == 0 and all(
        f"-X{o}" in out for o in ("profile", "analysis", "cab.size", "cab.chunk", "profile.out", "profile.stage",
                                  "buffer", "cab.mode", "sample.rate", "sample.burst", "threads", "carriers",
                                  "analyzers", "affinity", "stats")), out)

    return check.finish("profile tests")


if __name__ == "__main__":
    sys.exit(main())
