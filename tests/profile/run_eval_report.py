#!/usr/bin/env python3
"""The evaluation's report is reproducible from its raw runs: `bench/eval/run.py --report-only`
on a copy of the committed results folder (its CSVs and meta.json only) must write report.md,
targets.csv, costmodel.csv and the plots again, with exactly the committed targets.csv (the
issue's targets, their figures and verdicts). Guards the analysis and report code: a change
that alters a published figure must come with the regenerated folder.

Usage: run_eval_report.py [RESULTS_DIR]   (default: the newest bench/results run)
"""
import os
import shutil
import sys
import tempfile

import tandem_harness as th

REPO = th.REPO


def newest():
    """The newest results folder (in a clean checkout: the newest committed one)."""
    res = os.path.join(REPO, "bench", "results")
    runs = sorted(d for d in os.listdir(res)
                  if os.path.exists(os.path.join(res, d, "targets.csv")) and
                  os.path.exists(os.path.join(res, d, "fig8.csv")))
    return os.path.join(res, runs[-1]) if runs else None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else newest()
    if src is None:
        print("FAIL: no results folder with targets.csv under bench/results")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "run")
        os.mkdir(dst)
        for f in os.listdir(src):
            if f.endswith(".csv") and f not in ("targets.csv", "costmodel.csv") or f == "meta.json":
                shutil.copy(os.path.join(src, f), dst)
        r = th.run_once([sys.executable, os.path.join(REPO, "bench", "eval", "run.py"), "--report-only", dst],
                        timeout=300)
        if r.code != 0:
            failures.append("run.py --report-only exited %s: %s" % (r.code, r.err[-800:]))
        else:
            for f in ("report.md", "targets.csv", "costmodel.csv", "plots/summary.svg", "plots/summary.png",
                      "plots/fig7.svg", "plots/fig8.svg", "plots/fig9.svg", "plots/fig10.svg", "plots/fig11.svg"):
                if not os.path.exists(os.path.join(dst, f)):
                    failures.append("not written: " + f)
            want = open(os.path.join(src, "targets.csv")).read()
            got = open(os.path.join(dst, "targets.csv")).read() if os.path.exists(os.path.join(dst, "targets.csv")) else ""
            if got != want:
                failures.append("targets.csv differs from the committed one in %s:\n--- committed\n%s\n--- regenerated\n%s"
                                % (src, want, got))
            rep = open(os.path.join(dst, "report.md")).read() if os.path.exists(os.path.join(dst, "report.md")) else ""
            rows = [l for l in rep.splitlines() if l.startswith("| ") and l.rstrip().endswith(("PASS |", "FAIL |", "n/a |"))]
            if "## Summary: the issue's targets" not in rep or len(rows) < 16:
                failures.append("report.md lacks the summary table of 16 targets (%d rows)" % len(rows))
    for f in failures:
        print("FAIL: " + f)
    print("eval report from %s: %s" % (os.path.relpath(src, REPO), "FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
