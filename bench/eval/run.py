#!/usr/bin/env python3
"""The CAB paper's evaluation (sections 4 and 6) on Tandem, from one command.

    python3 bench/eval/run.py [--quick] [--out DIR] [--runs N] [--only fig7,fig8,...,full] [--scale F]
    python3 bench/eval/run.py --report-only DIR     # redo report.md and plots from DIR's CSVs

Writes bench/results/YYYY-MM-DD-HHMM/ (or DIR): one CSV per experiment with every raw run
(fig7.csv ... fig11.csv, full.csv), costmodel.csv, targets.csv, report.md, meta.json and plots/*.svg,
*.png (gnuplot). Full mode: 7 rounds, ~25 min on the project's 2 vCPUs; --quick: 3
rounds of fewer, smaller programs, under 5 min. Progress and an ETA go to stderr.

Timing discipline (shared/notes/measuring.md): every experiment runs in rounds; in a round
each program runs its base (uninstrumented) configuration and every other configuration once,
in an order shuffled per round, so configurations are interleaved and never timed in blocks,
and each run is compared with the base run of the same program in the same round. Every run
is framed by a cache-line round-trip probe; its placement class is the probes' class when both
agree, else "moved". The tandem and cab_bench binaries are copied once at the start, so a
rebuild of build/ by someone else cannot change the binary mid-evaluation.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)
import experiments as ex  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402

FIELDS = ["experiment", "round", "pos", "program", "scale", "threads", "config", "analysis", "form",
          "buffer", "ring_kb", "chunk_kb", "rate", "length", "load", "windows", "coverage",
          "shadow_forks", "shadow_analysed", "shadow_live_s", "shadow_live_share", "coverage_per_live", "shadow_compiled", "shadow_ns_tick", "policy", "affinity", "seconds", "base_seconds", "ratio", "cpu_s", "load1", "placement",
          "probe_before_ns", "probe_before", "probe_after_ns", "probe_after",
          "produced", "consumed", "dropped", "chunks", "blocks", "blocked_ms", "analyzer_idle_ms",
          "analyzers", "analyzer_chunks", "analyzer_busy_ms", "self_chunks", "self_ms", "error_all", "items_all", "error_hot", "items_hot", "error_weighted", "hot_overlap", "rc", "error", "cmd"]


def fmt_dur(s):
    s = int(s)
    return "%dm%02ds" % (s // 60, s % 60)


def profile_items(path):
    """{item: count} and the sample rate of the JSON profile at [path]; None if unreadable."""
    try:
        doc = th.load_profile(path)[0]
    except ValueError:
        return None, None
    return th.items_of(doc, None), doc.get("sample_rate", 1.0)


class Progress:
    """Runs done / planned, elapsed, and an ETA from the mean time per run so far."""

    def __init__(self, total, prior_s):
        self.total, self.done, self.t0, self.prior_s = total, 0, time.time(), prior_s

    def eta(self):
        el = time.time() - self.t0
        per = el / self.done if self.done else self.prior_s
        return el, per * (self.total - self.done)

    def line(self, what):
        el, eta = self.eta()
        print("[%s] %d/%d runs, %s elapsed, ETA %s" % (what, self.done, self.total, fmt_dur(el), fmt_dur(eta)),
              file=sys.stderr, flush=True)


def run_experiment(name, configs, progs, runs, tools, tmp, progress, threads):
    rows = []
    refs = {}
    # Fig. 11's error rate needs the exhaustive profile of each program: one untimed concurrent
    # exhaustive run per program and analysis, before the rounds (profiles are deterministic).
    for prog, scale in progs if any(c.json for c in configs) else []:
        fname, extra = ex.program_args(prog)
        for a in sorted({c.fields["analysis"] for c in configs if c.json}):
            path = os.path.join(tmp, "ref.json")
            r = measure.run(tools["tandem"], None, ex.program_opts(name, prog) +
                            ["-Xprofile=" + a, "-Xprofile.format=json", "-Xprofile.out=" + path],
                                 os.path.join(th.REPO, ex.SUITE, fname + ".lua"), scale, extra=extra)
            refs[(prog, a)] = profile_items(path)[0] if r["rc"] == 0 else None
    for rnd in range(runs):
        for prog, scale in progs:
            fname, extra = ex.program_args(prog)
            path = os.path.join(th.REPO, ex.SUITE, fname + ".lua")
            order = list(configs)
            # a fixed seed per (experiment, round, program): the order differs from round to
            # round (no configuration always runs first or right after another) but a rerun of
            # the evaluation runs the same sequence
            random.Random("%s/%d/%s" % (name, rnd, prog)).shuffle(order)
            batch = []
            for pos, c in enumerate(order):
                args = ex.program_opts(name, prog) + list(c.args)
                out = os.path.join(tmp, "prof.json")
                if c.json:
                    args.append("-Xprofile.out=" + out)
                    if os.path.exists(out):
                        os.unlink(out)
                # Runs without an analyzer thread (uninstrumented, sequential) are pinned to the
                # CPU(s) tandem gives the application when it has an analyzer: otherwise a
                # multi-threaded program's baseline gets both vCPUs while its concurrent runs get
                # one, and the "overhead" would be the lost core, not the analysis. (The full
                # experiment's -Xaffinity=none runs have no such loss, nor their base a pin.)
                pin = tools["app_cpus"] if c.pin else None
                r = measure.run(tools["tandem"], tools["cab_bench"], args, path, scale, pin=pin, extra=extra)
                popts = [o.split("=", 1)[1] for o in ex.program_opts(name, prog) if o.startswith("-Xthreads=")]
                row = {"experiment": name, "round": rnd, "pos": pos, "program": prog, "scale": scale,
                       "threads": popts[-1] if popts else threads, "config": c.key}
                row.update({k: v for k, v in c.fields.items() if k != "json"})
                row.update(r)
                if c.json and r["rc"] == 0 and refs.get((prog, c.fields["analysis"])):
                    act = refs[(prog, c.fields["analysis"])]
                    smp, rate = profile_items(out)
                    if smp is not None:
                        e_all, n_all, _ = th.error_rate(act, smp, rate)
                        # items a sample sees ~100 times or more (as bench/analyses.py)
                        e_hot, n_hot, _ = th.error_rate(act, smp, rate, 100.0 / rate)
                        row.update(error_all=e_all, items_all=n_all, error_hot=e_hot, items_hot=n_hot,
                                   error_weighted=th.weighted_error(act, smp, rate),
                                   hot_overlap=th.hot_overlap(act, smp))
                        if c.fields.get("form") == "shadow":
                            row["coverage"] = rate   # the shadows' coverage of the run
                            # what a shadow's life buys: coverage / (shadow-live time / the run)
                            if row.get("shadow_live_share"):
                                row["coverage_per_live"] = rate / row["shadow_live_share"]
                if r["rc"] != 0:
                    print("eval: FAILED %s: %s" % (r["cmd"], r.get("error", "")), file=sys.stderr, flush=True)
                batch.append(row)
                progress.done += 1
            base = {b["config"]: b["seconds"] for b in batch if b["rc"] == 0}
            for c, b in zip(order, batch):
                if c.base in base and b["rc"] == 0:
                    b["base_seconds"] = base[c.base]
                    b["ratio"] = b["seconds"] / base[c.base]
            rows.extend(batch)
            progress.line("%s round %d/%d %s" % (name, rnd + 1, runs, prog))
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.6g" % v if isinstance(v, float) else v) for k, v in r.items()})


def machine_info(tandem):
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "(%s not available)" % cmd[0]
    keep = ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket", "Hypervisor vendor",
            "L1d cache", "L2 cache", "L3 cache", "NUMA node(s)")
    lscpu = "\n".join(l for l in sh(["lscpu"]).splitlines() if l.split(":")[0].strip() in keep)
    git = sh(["git", "-C", th.REPO, "rev-parse", "HEAD"])
    dirty = sh(["git", "-C", th.REPO, "status", "--porcelain", "--untracked-files=no"])
    return {"lscpu": lscpu, "hwloc": sh(["lstopo-no-graphics", "--no-io", "--of", "console"]),
            "uname": sh(["uname", "-srm"]), "git_commit": git,
            "git_subject": sh(["git", "-C", th.REPO, "log", "-1", "--format=%s"]),
            "git_dirty_files": len(dirty.splitlines()) if dirty else 0,
            "topology": measure.topology(tandem), "loadavg_start": open("/proc/loadavg").read().split()[:3]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds of fewer, smaller programs (<5 min)")
    ap.add_argument("--out", help="output folder (default bench/results/YYYY-MM-DD-HHMM)")
    ap.add_argument("--runs", type=int, help="rounds per experiment (default 7, quick 3)")
    ap.add_argument("--only", help="comma-separated experiments: fig7,fig8,fig9,fig10,fig11,always,shadow,full")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every program's scale (e.g. 10 with --only always: runs of a few"
                         " seconds, which resolve an overhead of 1%% where 0.2-0.5 s runs cannot)")
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--cab-bench", default=os.path.join(th.REPO, "build", "cab", "cab_bench"))
    ap.add_argument("--report-only", metavar="DIR", help="rewrite report.md and plots from DIR's CSVs")
    o = ap.parse_args()

    if o.report_only:
        report.write(o.report_only)
        return

    mode = "quick" if o.quick else "full"
    runs = o.runs or ex.RUNS[mode]
    plan = ex.plan(mode, o.only.split(",") if o.only else None, o.scale)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d-%H%M")
    out = os.path.abspath(o.out or os.path.join(th.REPO, "bench", "results", stamp))
    os.makedirs(out, exist_ok=True)
    total = ex.run_count(plan, runs)
    prior = (0.35 if mode == "quick" else 0.6) * o.scale   # seconds per run seen here, for the first ETA
    print("eval: %s mode, %d rounds, %d timed runs (~%s), results in %s" %
          (mode, runs, total, fmt_dur(total * prior), out), file=sys.stderr, flush=True)

    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix="tandem-eval-") as tmp:
        tools = {"tandem": measure.stable_copy(os.path.abspath(o.tandem), tmp, ["-e", "local x = 1"])}
        tools["cab_bench"] = (measure.stable_copy(os.path.abspath(o.cab_bench), tmp, ["-P"])
                              if os.path.exists(o.cab_bench) else None)
        tools["app_cpus"] = measure.app_cpus(tools["tandem"])
        meta = {"mode": mode, "scale_factor": o.scale, "app_cpus": tools["app_cpus"], "runs": runs, "command": " ".join(["python3"] + sys.argv),
                "started_utc": stamp, "tandem_sha256": measure.sha256(tools["tandem"]),
                "tandem_mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(os.stat(o.tandem).st_mtime)),
                "experiments": {n: {"title": t, "programs": p} for n, t, _, p in plan}}
        meta.update(machine_info(tools["tandem"]))
        progress = Progress(total, prior)
        for name, title, configs, progs in plan:
            print("eval: %s — %s" % (name, title), file=sys.stderr, flush=True)
            rows = run_experiment(name, configs, progs, runs, tools, tmp, progress,
                                  "green" if name == "fig9" else "native")
            write_csv(os.path.join(out, name + ".csv"), rows)
    meta["seconds"] = time.time() - t_start
    meta["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    try:
        meta["build_changed"] = measure.sha256(o.tandem) != meta["tandem_sha256"]
    except OSError:
        meta["build_changed"] = True
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("eval: measured in %s; writing report and plots" % fmt_dur(meta["seconds"]), file=sys.stderr, flush=True)
    report.write(out)
    print("eval: done: %s" % os.path.join(out, "report.md"), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
