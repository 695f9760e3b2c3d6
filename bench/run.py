#!/usr/bin/env python3
"""Benchmark runner: times bench/programs/*.lua under tandem, lua5.4 and luajit.

For every program, the implementations run interleaved, run by run
(A B C A B C ...), so that load on the (shared, noisy) machine falls on all of
them alike. Each run's stdout must equal lua5.4's; a run whose output differs
or whose exit status is not 0 makes that implementation's figures for the
program invalid (reported, and left out of the ratios). Times are wall-clock
seconds of the whole process; peak RSS comes from wait4's ru_maxrss.

    python3 bench/run.py [--runs N] [--tandem build/tandem] [--only NAME]...
                         [--extra-arg -Xname=value]... [--csv FILE]
"""

import argparse
import csv
import ctypes
import math
import os
import shutil
import statistics
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(HERE, "programs")


class Impl:
    def __init__(self, name, argv):
        self.name = name
        self.argv = argv


class Stats:
    """The runs of one program under one implementation."""

    def __init__(self):
        self.times = []
        self.cpu = []
        self.rss_kb = []
        self.problems = []

    @property
    def valid(self):
        return not self.problems and bool(self.times)

    def median(self):
        return statistics.median(self.times)

    def rss_median(self):
        return statistics.median(self.rss_kb)


def join_extra_args(argv):
    """`--extra-arg -Xfoo` -> `--extra-arg=-Xfoo` (argparse would take -Xfoo
    for an option)."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--extra-arg" and i + 1 < len(argv):
            out.append("--extra-arg=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def find_tandem(path):
    for candidate in (path, os.path.join(ROOT, path)):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


# Linux records in ru_maxrss the resident size a process had when it called
# exec, so a program started straight from this (15 MB) Python process would
# never show less than 15 MB. Instead a small /bin/sh starts it in the
# background, tells us its pid and exits; as a child subreaper we inherit the
# program and wait4 it ourselves.
PR_SET_CHILD_SUBREAPER = 36
LAUNCHER = '"$@" 3>&- & echo $! >&3'


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("run.py: prctl(PR_SET_CHILD_SUBREAPER) failed")


def run_once(argv, program, timeout):
    """(seconds, CPU seconds, peak RSS in KB, exit status or None, stdout, stderr).

    The current directory is already PROGRAMS (set once in main)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        rfd, wfd = os.pipe()
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                   (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
                   (os.POSIX_SPAWN_DUP2, wfd, 3),
                   (os.POSIX_SPAWN_CLOSE, rfd)]
        start = time.perf_counter()
        sh = os.posix_spawn("/bin/sh", ["sh", "-c", LAUNCHER, "sh"] + argv + [program],
                            os.environ, file_actions=actions)
        os.close(wfd)
        os.waitpid(sh, 0)
        with os.fdopen(rfd) as f:
            pid = int(f.read().strip())
        killed = []

        def kill():
            killed.append(True)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter() - start
        timer.cancel()
        out.seek(0)
        err.seek(0)
        if killed:
            code = None
        elif os.WIFSIGNALED(status):
            code = -os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        cpu = usage.ru_utime + usage.ru_stime
        return elapsed, cpu, usage.ru_maxrss, code, out.read(), err.read()


def fmt_time(st):
    if not st.times:
        return "-"
    mark = "" if st.valid else " INVALID"
    return "%.3f (%.3f-%.3f)%s" % (st.median(), min(st.times), max(st.times), mark)


def ratio(a, b):
    if a is None or b is None or not a.valid or not b.valid:
        return None
    return a.median() / b.median()


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join("%-*s" % (widths[i], header[i]) for i in range(len(header)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join("%-*s" % (widths[i], r[i]) for i in range(len(header))))


def main():
    ap = argparse.ArgumentParser(description="Run Tandem's benchmark programs.")
    ap.add_argument("--runs", type=int, default=5, help="runs per implementation (default 5)")
    ap.add_argument("--tandem", default="build/tandem", help="tandem binary (default build/tandem)")
    ap.add_argument("--lua5.4", dest="lua", default="lua5.4", help="reference interpreter")
    ap.add_argument("--luajit", default="luajit")
    ap.add_argument("--only", action="append", default=[],
                    help="run only programs whose name contains NAME (repeatable)")
    ap.add_argument("--extra-arg", action="append", default=[],
                    help="option passed to tandem before the program (repeatable)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run")
    ap.add_argument("--csv", help="also write the results to this CSV file")
    opts = ap.parse_args(join_extra_args(sys.argv[1:]))

    impls = []
    tandem = find_tandem(opts.tandem)
    if tandem:
        impls.append(Impl("tandem", [tandem] + opts.extra_arg))
    else:
        print("note: no tandem binary at %s; skipping tandem" % opts.tandem)
    for name, exe in (("lua5.4", opts.lua), ("luajit", opts.luajit)):
        path = shutil.which(exe)
        if path:
            impls.append(Impl(name, [path]))
        else:
            print("note: %s not found; skipping it" % exe)
    if not impls:
        sys.exit("run.py: no implementation to run")
    names = [i.name for i in impls]
    if "lua5.4" not in names:
        print("note: without lua5.4 the outputs are not checked")

    os.chdir(PROGRAMS)
    become_subreaper()
    programs = sorted(f for f in os.listdir(PROGRAMS) if f.endswith(".lua"))
    if opts.only:
        programs = [p for p in programs if any(o in p[:-4] for o in opts.only)]
    if not programs:
        sys.exit("run.py: no program matches")

    tag = " ".join(opts.extra_arg)
    print("runs: %d per implementation, interleaved; implementations: %s%s"
          % (opts.runs, ", ".join(names), " (tandem %s)" % tag if tag else ""))
    results = {}
    for prog in programs:
        stats = {i.name: Stats() for i in impls}
        reference = None
        for _ in range(opts.runs):
            # lua5.4 first in each round, so the reference exists when others run
            for impl in sorted(impls, key=lambda i: i.name != "lua5.4"):
                st = stats[impl.name]
                t, cpu, rss, status, out, err = run_once(impl.argv, prog, opts.timeout)
                st.times.append(t)
                st.cpu.append(cpu)
                st.rss_kb.append(rss)
                if status is None:
                    st.problems.append("timed out after %g s" % opts.timeout)
                elif status < 0:
                    st.problems.append("killed by signal %d" % -status)
                elif status != 0:
                    first = err.decode("utf-8", "replace").strip().split("\n")[0]
                    st.problems.append("exit status %d: %s" % (status, first))
                elif impl.name == "lua5.4" and reference is None:
                    reference = out
                elif reference is not None and out != reference:
                    st.problems.append("stdout differs from lua5.4's")
        results[prog] = stats
        for name in names:
            for problem in sorted(set(stats[name].problems)):
                print("%s under %s: %s" % (prog, name, problem))
        print("%-24s %s" % (prog[:-4], "  ".join(
            "%s %s" % (n, fmt_time(stats[n])) for n in names)), flush=True)

    print()
    header = ["program"] + ["%s s" % n for n in names]
    have = {n: n in names for n in ("tandem", "lua5.4", "luajit")}
    if have["tandem"] and have["lua5.4"]:
        header.append("tandem/lua5.4")
    if have["tandem"] and have["luajit"]:
        header.append("tandem/luajit")
    rows = []
    r_lua, r_jit = [], []
    for prog in programs:
        st = results[prog]
        row = [prog[:-4]] + [fmt_time(st[n]) for n in names]
        if have["tandem"] and have["lua5.4"]:
            r = ratio(st["tandem"], st["lua5.4"])
            r_lua.append(r)
            row.append("%.2f" % r if r else "-")
        if have["tandem"] and have["luajit"]:
            r = ratio(st["tandem"], st["luajit"])
            r_jit.append(r)
            row.append("%.2f" % r if r else "-")
        rows.append(row)
    if have["tandem"] and (have["lua5.4"] or have["luajit"]):
        row = ["geometric mean"] + [""] * len(names)
        if have["lua5.4"]:
            g = geomean(r_lua)
            row.append("%.2f" % g if g else "-")
        if have["luajit"]:
            g = geomean(r_jit)
            row.append("%.2f" % g if g else "-")
        rows.append(row)
    print("wall-clock seconds: median (min-max)")
    print_table(header, rows)

    print()
    header = ["program"] + ["%s MB" % n for n in names]
    if have["tandem"] and have["lua5.4"]:
        header.append("tandem/lua5.4")
    rows, r_rss = [], []
    for prog in programs:
        st = results[prog]
        row = [prog[:-4]] + ["%.1f" % (st[n].rss_median() / 1024.0) for n in names]
        if have["tandem"] and have["lua5.4"]:
            r = st["tandem"].rss_median() / st["lua5.4"].rss_median()
            r_rss.append(r)
            row.append("%.2f" % r)
        rows.append(row)
    if r_rss:
        rows.append(["geometric mean"] + [""] * len(names) + ["%.2f" % geomean(r_rss)])
    print("peak RSS: median")
    print_table(header, rows)

    if opts.csv:
        with open(opts.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["program", "implementation", "extra_args", "runs", "valid",
                        "median_s", "min_s", "max_s", "cpu_median_s", "rss_median_kb",
                        "problems"])
            for prog in programs:
                for n in names:
                    st = results[prog][n]
                    w.writerow([prog[:-4], n, tag if n == "tandem" else "", len(st.times),
                                int(st.valid), "%.4f" % st.median(), "%.4f" % min(st.times),
                                "%.4f" % max(st.times), "%.4f" % statistics.median(st.cpu),
                                int(st.rss_median()),
                                "; ".join(sorted(set(st.problems)))])
        print("\nwrote %s" % opts.csv)
    invalid = any(not results[p][n].valid for p in programs for n in names)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
