#!/usr/bin/env python3
"""Soak test: every thread program (tests/threads) and every multi-threaded program of the
evaluation suite (bench/suite/mt_*.lua) in a loop under every configuration, for a given
time, checking each run's output and, when it profiles, that every event produced was
consumed (-Xstats).

Configurations: native threads; green threads on 1, 2 and 4 carriers; each analysis
(-Xprofile=A with -Xstats, concurrent) on native and on green threads; the smallest ring
(-Xcab.size=12k -Xcab.chunk=4k); collections every N allocations (-Xgc.stress=N); and the
schedule fuzzer (-Xtest.sched_fuzz=SEED, a new seed each run, native and green).

Checks: a thread program must print its .expected, exit with its .status (0 without one) and
print its .stderr line (prefix removed) among its stderr lines; a suite program must exit 0
and print what it printed under plain native threads (bench/suite/check.py's way: the
programs check their own results, and the output may not depend on the model). With a
profile, `cab total` must say produced == consumed and nothing dropped.

    scripts/soak.py --minutes 30                      # the nightly soak
    scripts/soak.py --minutes 1 --seed 1              # ctest soak_short
    scripts/soak.py --minutes 5 --only 'fuzz-'        # the schedule fuzzer alone
    scripts/soak.py --minutes 5 --only 'fuzz-' --programs threads   # ... on tests/threads only
Prints the runs, every failure with the command line that reproduces it (run it from the
repository root), and the slowest run; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import os
import pathlib
import random
import re
import shlex
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

ANALYSES = ["methodcount", "callgraph", "calltree", "pathprof", "cachesim"]
GREEN = {1: ["-Xthreads=green", "-Xcarriers=1"], 2: ["-Xthreads=green", "-Xcarriers=2"],
         4: ["-Xthreads=green", "-Xcarriers=4"]}
NATIVE = ["-Xthreads=native"]


def configurations(gc_stress):
    """[(name, options)]; an option "SCHED" is replaced by -Xtest.sched_fuzz=<seed> per run."""
    cfgs = [("native", NATIVE)] + [("green%d" % n, GREEN[n]) for n in (1, 2, 4)]
    for a in ANALYSES:
        prof = ["-Xprofile=" + a, "-Xstats"]
        cfgs += [("%s-native" % a, NATIVE + prof), ("%s-green2" % a, GREEN[2] + prof)]
    small = ["-Xprofile=callgraph", "-Xstats"] + th.SMALL_RING
    cfgs += [("smallring-native", NATIVE + small), ("smallring-green4", GREEN[4] + small)]
    cfgs += [("gcstress-native", NATIVE + ["-Xgc.stress=%d" % gc_stress]),
             ("gcstress-green2", GREEN[2] + ["-Xgc.stress=%d" % gc_stress])]
    cfgs += [("fuzz-native", NATIVE + ["SCHED"]), ("fuzz-green1", GREEN[1] + ["SCHED"]),
             ("fuzz-green2", GREEN[2] + ["SCHED"]), ("fuzz-green4", GREEN[4] + ["SCHED"]),
             ("fuzz-methodcount-green2", GREEN[2] + ["SCHED", "-Xprofile=methodcount", "-Xstats"] + th.SMALL_RING)]
    return cfgs


class Program:
    """One program: its folder, file, fixed options and arguments, and what it must print."""

    def __init__(self, kind, path, opts=(), args=()):
        self.kind, self.path, self.opts, self.args = kind, path, list(opts), list(args)
        self.dir, self.file = os.path.dirname(path), os.path.basename(path)
        self.name = self.file[:-4]
        self.expected = self.side(".expected")
        status = self.side(".status")
        self.status = int(status) if status else 0
        self.stderr = (self.side(".stderr") or "").strip()
        self.ref_lock = threading.Lock()

    def side(self, ext):
        p = os.path.join(self.dir, self.name + ext)
        if not os.path.exists(p):
            return None
        with open(p) as f:
            return f.read()


def thread_programs():
    d = os.path.join(th.REPO, "tests", "threads")
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".lua"):
            opts_file = os.path.join(d, f[:-4] + ".opts")
            opts = open(opts_file).read().split() if os.path.exists(opts_file) else []
            out.append(Program("threads", os.path.join(d, f), opts))
    return out


def suite_programs(scale):
    d = os.path.join(th.REPO, "bench", "suite")
    return [Program("suite", os.path.join(d, f), args=[scale]) for f in sorted(os.listdir(d))
            if f.startswith("mt_") and f.endswith(".lua")]


def command(tandem, prog, cfg_opts, sched_seed, profile_out):
    opts = [("-Xtest.sched_fuzz=%d" % sched_seed) if o == "SCHED" else o for o in cfg_opts]
    if any(o.startswith("-Xprofile=") for o in opts):
        opts.append("-Xprofile.out=" + profile_out)
    return [tandem] + opts + prog.opts + [prog.file] + prog.args


def check(prog, r, cmd, reference):
    """The problems of one run (empty: it passed)."""
    if r.timed_out:
        return ["timed out"]
    problems = []
    if r.code != prog.status:
        problems.append("exit status %s, expected %s; stderr: %s" % (r.code, prog.status, r.err.strip()[-400:]))
    want = prog.expected if prog.kind == "threads" else reference
    if want is not None and r.out != want:
        problems.append("stdout differs:\n    expected: %r\n    actual:   %r" % (want[-300:], r.out[-300:]))
    if prog.kind == "suite" and not r.out.strip():
        problems.append("printed nothing")
    if prog.stderr:
        lines = [re.sub(r"^tandem: ", "", l) for l in r.err.split("\n")]
        if prog.stderr not in lines:
            problems.append("stderr has no line %r: %s" % (prog.stderr, r.err.strip()[-300:]))
    if "-Xstats" in cmd and "-Xprofile" in " ".join(cmd):
        total = th.parse_stats(r.err).total
        if total is None:
            if prog.status == 0:
                problems.append("no `cab total` line in -Xstats")
        elif not th.nothing_lost(total):
            problems.append("events lost: " + total["line"])
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tandem", default=None)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--seed", type=int, default=None, help="order and sched_fuzz seeds (default: from the clock)")
    ap.add_argument("--only", default="", help="regex: only the configurations whose name matches")
    ap.add_argument("--programs", default="threads,suite", help="threads, suite or both (comma-separated)")
    ap.add_argument("--scale", default="0.02", help="bench/suite scale")
    ap.add_argument("--gc-stress", type=int, default=500, help="N of the gc stress configurations")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    tandem = th.find_tandem(args.tandem, required=True)
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    rnd = random.Random(seed)
    cfgs = [c for c in configurations(args.gc_stress) if re.search(args.only, c[0])]
    kinds = args.programs.split(",")
    progs = (thread_programs() if "threads" in kinds else []) + (suite_programs(args.scale) if "suite" in kinds else [])
    if not cfgs or not progs:
        sys.exit("soak.py: nothing to run")
    # Every (program, configuration) pair once per round, in an order drawn from the seed.
    pairs = [(p, c) for p in progs for c in cfgs]
    lock = threading.Lock()
    stats = {"runs": 0, "failures": [], "slowest": (0.0, None), "per_cfg": {}}
    references = {}
    tmp = tempfile.mkdtemp(prefix="tandem_soak_")
    deadline = time.monotonic() + args.minutes * 60
    t0 = time.monotonic()

    def reference(prog):
        """A suite program's output under plain native threads (computed once)."""
        with prog.ref_lock:
            if prog.path not in references:
                r = th.run_once([tandem] + NATIVE + [prog.file] + prog.args, cwd=prog.dir, timeout=args.timeout)
                references[prog.path] = r.out if r.code == 0 and r.out.strip() else None
            return references[prog.path]

    def one(job):
        n, prog, (cname, copts), sched_seed = job
        if time.monotonic() >= deadline:
            return
        ref = reference(prog) if prog.kind == "suite" else None
        out = os.path.join(tmp, "profile_%d" % n)
        cmd = command(tandem, prog, copts, sched_seed, out)
        r = th.run_once(cmd, cwd=prog.dir, timeout=args.timeout)
        if os.path.exists(out):
            os.remove(out)
        problems = check(prog, r, cmd, ref)
        if prog.kind == "suite" and ref is None:
            problems.append("no reference: its plain native run failed")
        repro = "(cd %s && %s)" % (os.path.relpath(prog.dir, th.REPO),
                                   " ".join(shlex.quote(a) for a in cmd).replace(out, "/tmp/p.out"))
        with lock:
            stats["runs"] += 1
            c = stats["per_cfg"].setdefault(cname, [0, 0])
            c[0] += 1
            if r.seconds > stats["slowest"][0]:
                stats["slowest"] = (r.seconds, repro)
            if problems:
                c[1] += 1
                stats["failures"].append((repro, problems))
                print("FAIL %s [%s]: %s\n  %s" % (prog.name, cname, "; ".join(problems), repro))
            elif args.verbose:
                print("ok   %-20s %-24s %.2fs" % (prog.name, cname, r.seconds))
            sys.stdout.flush()

    def jobs():
        n = 0
        while time.monotonic() < deadline:
            order = pairs[:]
            rnd.shuffle(order)
            for prog, cfg in order:
                n += 1
                yield n, prog, cfg, rnd.randint(1, 0xffffffff)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        for job in jobs():
            pending.add(pool.submit(one, job))
            if len(pending) >= args.jobs * 2:
                _, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
        concurrent.futures.wait(pending)
    os.rmdir(tmp)
    minutes = (time.monotonic() - t0) / 60
    print("soak: %d runs of %d programs x %d configurations in %.1f min (seed %d), %d failure(s)" %
          (stats["runs"], len(progs), len(cfgs), minutes, seed, len(stats["failures"])))
    for cname, (runs, fails) in sorted(stats["per_cfg"].items()):
        print("  %-26s %5d runs %3d failures" % (cname, runs, fails))
    if stats["slowest"][1]:
        print("slowest run: %.2f s: %s" % stats["slowest"])
    for repro, problems in stats["failures"]:
        print("failure: %s\n  %s" % (repro, "\n  ".join(problems)))
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
