#!/usr/bin/env python3
"""Shadow profiling's costs split into their parts, in CPU time, which a loaded machine does not
blur as it blurs wall time, and in wall time against the uninstrumented run, for a quiet one:
what the program's own thread spends (fork, copy-on-write faults, a slower core while a shadow
runs beside it) and what the shadows spend a tick they cover, with the coverage and the
weighted error of each run.

    python3 bench/eval/shadow_cpu.py [--runs 5] [--analysis callgraph] [--tandem build/tandem]

The configurations (CONFIGS): the uninstrumented run (base, started on the program's CPU as
run.py starts it); shadow mode with a -Xshadow.length no run reaches (NOFORK: the same
uninstrumented code and countdown, no fork: the program's own work in shadow mode); shadows
that run no window and live until the end, asleep (the fork and its copy-on-write faults) or
spinning on the other core (that plus a busy core beside the program: -Xtest.shadow_idle); and
working shadows at several <length, load>, the default among them. The program's thread time is
-Xstats' "the ending thread" (user + system) of a run (the base's: the process's), each ratio
against NOFORK's, and, as shares of the run's wall time, its time runnable but waiting for a
core (contention, which CPU time does not show), in forks, and waiting for the last shadows
(and their analysis) at the end; "wall vs base" is the median wall time against the base's, meaningful on a
quiet machine only (say the load: it is printed). The configurations run interleaved, in an
order shuffled per round (shared/notes/measuring.md); medians per program, geometric mean over
programs. Prints a markdown table; --json writes every run.
"""
import argparse
import json
import os
import pathlib
import random
import re
import statistics
import sys
import tempfile

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)
import experiments as ex  # noqa: E402
import measure  # noqa: E402

NOFORK = 10 ** 9   # -Xshadow.length (its largest) beyond these runs: the first check, at 1/16 of it or later, never comes
PROGRAMS = ["richards", "json", "havlak", "raytrace", "interp"]
# (label, length, load, extra options); length None: the uninstrumented base
CONFIGS = [("base (no profile)", None, None, []),
           ("no fork", NOFORK, 0.1, []),
           ("idle sleep 2000000/0.1", 2000000, 0.1, ["-Xtest.shadow_idle=sleep"]),
           ("idle spin 2000000/0.1", 2000000, 0.1, ["-Xtest.shadow_idle=spin"]),
           ("2000000/0.1 (default)", 2000000, 0.1, []),
           ("1000000/0.1", 1000000, 0.1, []),
           ("200000/1 (first default)", 200000, 1, [])]
THREAD_RE = re.compile(r"the ending thread .*?: minor page faults (\d+), system time ([0-9.]+) ms, user time ([0-9.]+) ms")
RUNQ_RE = re.compile(r"the ending thread .*?waiting for a core ([0-9.]+) ms")


def one(tandem, prog, scale, analysis, cfg, out, pin):
    label, n, ld, extra = cfg
    path = os.path.join(th.REPO, ex.SUITE, prog + ".lua")
    if n is None:
        r = th.run_once(["taskset", "-c", pin, "/usr/bin/time", "-f", "TIME %U %S %R", tandem, path, str(scale)], timeout=300)
        m = re.search(r"TIME ([0-9.]+) ([0-9.]+) (\d+)", r.err)
        if r.code != 0 or not m:
            return None
        return {"program": prog, "config": label, "seconds": r.seconds, "parent_minflt": int(m.group(3)),
                "parent_cpu_ms": (float(m.group(1)) + float(m.group(2))) * 1e3}
    args = [tandem, "-Xprofile=" + analysis, "-Xprofile.format=json", "-Xprofile.out=" + out, "-Xsample.mode=shadow",
            "-Xshadow.length=%d" % n, "-Xshadow.load=%g" % ld, *extra,
            "-Xsample.seed=%d" % ex.CODE_SEED, "-Xstats", path, str(scale)]
    r = th.run_once(args, timeout=300)
    m = THREAD_RE.search(r.err)
    if r.code != 0 or not m:
        return None
    row = {"program": prog, "config": label, "seconds": r.seconds, "parent_minflt": int(m.group(1)),
           "parent_cpu_ms": float(m.group(2)) + float(m.group(3))}
    q = RUNQ_RE.search(r.err)
    if q:
        row["runq_share"] = float(q.group(1)) / 1e3 / r.seconds
    row.update(measure.shadow_stats(r.err, r.seconds))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--analysis", default="callgraph")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--json", help="write every run's figures here")
    o = ap.parse_args()
    progs = o.programs.split(",")
    rows = []
    pin = measure.app_cpus(o.tandem) or "0"
    with tempfile.TemporaryDirectory(prefix="tandem-shadow-cpu-") as tmp:
        out = os.path.join(tmp, "p.json")
        ref = {}
        for p in progs:
            th.run_once([o.tandem, "-Xprofile=" + o.analysis, "-Xprofile.format=json", "-Xprofile.out=" + out,
                         os.path.join(th.REPO, ex.SUITE, p + ".lua"), str(ex.scale_of(p, "full"))], timeout=300)
            ref[p] = th.items_of(th.load_profile(out)[0], None)
        for rnd in range(o.runs):
            for p in progs:
                order = list(CONFIGS)
                random.Random("%d/%s" % (rnd, p)).shuffle(order)
                for cfg in order:
                    if os.path.exists(out):
                        os.unlink(out)
                    row = one(o.tandem, p, ex.scale_of(p, "full"), o.analysis, cfg, out, pin)
                    if row is None:
                        print("failed: %s %s" % (p, cfg[0]), file=sys.stderr)
                        continue
                    if cfg[1] == NOFORK and row.get("shadow_forks"):
                        print("warning: %s forked in the no-fork configuration (a run of 60 M ticks or more)" % p,
                              file=sys.stderr)
                    if cfg[1] is not None and cfg[1] != NOFORK and not cfg[3]:
                        doc = th.load_profile(out)[0]
                        row["coverage"] = doc.get("sample_rate")
                        if row["coverage"]:
                            row["error_weighted"] = th.weighted_error(ref[p], th.items_of(doc, None), row["coverage"])
                    rows.append(row)
            print("round %d/%d done" % (rnd + 1, o.runs), file=sys.stderr, flush=True)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)

    def med(p, c, col):
        v = [r[col] for r in rows if r["program"] == p and r["config"] == c and r.get(col) is not None]
        return statistics.median(v) if v else None

    def gm(vals):
        vals = [v for v in vals if v]
        return statistics.geometric_mean(vals) if vals else None

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return statistics.mean(vals) if vals else None

    def f(x, spec):
        return "–" if x is None else spec % x
    print("%s, %d rounds, programs %s (scale as bench/eval's full mode); load average %s\n" % (
        o.analysis, o.runs, ", ".join(progs), " ".join(open("/proc/loadavg").read().split()[:3])))
    print("| configuration | wall vs base (geomean) | per program | program thread CPU vs no fork (geomean) | per program |"
          " its minor faults | its wait for a core (share of the wall) | in forks (share) | waiting at the end (share) | forks |"
          " coverage | shadow CPU ns a tick | shadows live | weighted error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    base, nofork = CONFIGS[0][0], CONFIGS[1][0]

    def ratios_of(c, ref, col):
        return [(med(p, c, col) or 0) / med(p, ref, col) if med(p, ref, col) else None for p in progs]
    for c in [c[0] for c in CONFIGS]:
        ratios = ratios_of(c, nofork, "parent_cpu_ms")
        walls = ratios_of(c, base, "seconds")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c, f(gm(walls), "%.3f"), " ".join(f(x, "%.3f") for x in walls),
            f(gm(ratios), "%.3f"), " ".join(f(x, "%.3f") for x in ratios),
            f(mean([med(p, c, "parent_minflt") for p in progs]), "%.0f"),
            f(mean([med(p, c, "runq_share") for p in progs]), "%.4f"),
            f(mean([med(p, c, "shadow_fork_share") for p in progs]), "%.4f"),
            f(mean([med(p, c, "shadow_end_share") for p in progs]), "%.4f"),
            f(mean([med(p, c, "shadow_forks") for p in progs]), "%.1f"),
            f(mean([med(p, c, "coverage") for p in progs]), "%.3f"),
            f(mean([med(p, c, "shadow_ns_tick") for p in progs]), "%.0f"),
            f(mean([med(p, c, "shadow_live_share") for p in progs]), "%.3f"),
            f(mean([med(p, c, "error_weighted") for p in progs]), "%.4f")))


if __name__ == "__main__":
    main()
