#!/usr/bin/env python3
"""Benchmark runner: times bench/programs/*.lua under tandem, lua5.4 and luajit.

Tandem runs in one or more configurations, each a name and the options passed
to it before the program (`--config NAME=ARGS`, repeatable; by default
tandem-interp = -Xjit=off and tandem-jit = -Xjit=on). `--extra-arg` options
are appended to every configuration. LuaJIT runs twice when it is installed:
as luajit-joff (`luajit -joff`, its interpreter) and as luajit (JIT on).

For every program, the implementations run interleaved, run by run
(A B C A B C ...), so that load on the (shared, noisy) machine falls on all of
them alike. Each run's stdout must equal lua5.4's; a run whose output differs
or whose exit status is not 0 makes that implementation's figures for the
program invalid (reported, and left out of the ratios). Times are wall-clock
seconds of the whole process; peak RSS comes from wait4's ru_maxrss.

    python3 bench/run.py [--runs N] [--tandem build/tandem] [--only NAME]...
                         [--config NAME=ARGS]... [--extra-arg -Xname=value]...
                         [--csv FILE]
"""

import argparse
import csv
import math
import os
import pathlib
import shlex
import statistics
import sys

sys.path.insert(0, str(next(d / "pylib" for d in pathlib.Path(__file__).resolve().parents if (d / "pylib").is_dir())))
import tandem_harness as th  # noqa: E402  (pylib/README.md: the one bootstrap of a script run by hand)

PROGRAMS = os.path.join(th.REPO, "bench", "programs")
# --suite: bench/suite's single-threaded programs (the mt_* ones need the thread
# library, which lua5.4 and luajit do not have); each takes its scale as argument.
SUITE = os.path.join(th.REPO, "bench", "suite")


# Tandem configurations when no --config is given.
DEFAULT_CONFIGS = ["tandem-interp=-Xjit=off", "tandem-jit=-Xjit=on"]

# The programs the JIT issue's numeric target is about (tandem-jit faster than
# LuaJIT's interpreter), in the order the target lists them.
NUMERIC = ("mandelbrot", "matrix_mul", "nbody", "spectral_norm", "sieve", "fib")


class Impl:
    """One implementation: a name, the family it belongs to (tandem, lua5.4 or
    luajit), its executable and the options passed before the program."""

    def __init__(self, name, family, exe, args=()):
        self.name = name
        self.family = family
        self.args = list(args)
        self.argv = [exe] + self.args


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


def x_name(arg):
    """`-Xname=value` -> `name`; None for anything else."""
    return arg[2:].split("=", 1)[0] if arg.startswith("-X") else None


def parse_configs(specs, extra_args):
    """[(name, args)] from `--config NAME=ARGS` values (DEFAULT_CONFIGS if none),
    ARGS split like a shell would, with the --extra-arg options appended."""
    configs = []
    for spec in specs or DEFAULT_CONFIGS:
        name, sep, args = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            sys.exit("run.py: --config wants NAME=ARGS, not %r" % spec)
        if name in ("lua5.4", "luajit", "luajit-joff") or name in [c[0] for c in configs]:
            sys.exit("run.py: --config: the name %s is already taken" % name)
        args = shlex.split(args)
        # The last -Xname wins in tandem, so an --extra-arg silently overrides
        # the configuration's own setting (--extra-arg -Xjit=on would make
        # tandem-interp a second tandem-jit): say so.
        for extra in dict.fromkeys(extra_args):  # each distinct option once
            for arg in args:
                if x_name(extra) and x_name(extra) == x_name(arg) and extra != arg:
                    print("note: --extra-arg %s overrides %s in configuration %s"
                          % (extra, arg, name))
        configs.append((name, args + extra_args))
    return configs


def fmt_time(st):
    if not st.times:
        return "-"
    mark = "" if st.valid else " INVALID"
    return "%.3f [%.3f,%.3f]%s" % (st.median(), min(st.times), max(st.times), mark)


def ratio(a, b):
    if a is None or b is None or not a.valid or not b.valid:
        return None
    return a.median() / b.median()


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt_ratio(r):
    return "%.2f" % r if r else "-"


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join("%-*s" % (widths[i], header[i]) for i in range(len(header)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join("%-*s" % (widths[i], r[i]) for i in range(len(header))))


def print_targets(programs, ratios):
    """The JIT issue's targets, from the median ratios: one line per target
    whose configurations ran (programs with invalid figures are left out and
    named)."""
    def invalid(rs):
        bad = [p[:-4] for p, r in rs.items() if r is None]
        return "; no valid figures for %s" % ", ".join(bad) if bad else ""

    def listed(rs):
        return ", ".join("%s (%.2f)" % (p[:-4], r) for p, r in rs)

    lines = []
    rs = ratios.get(("tandem-jit", "lua5.4"))
    if rs:
        lines.append("geomean tandem-jit/lua5.4 = %s (target <= 0.5)"
                     % fmt_ratio(geomean(rs.values())))
    rs = ratios.get(("tandem-jit", "luajit-joff"))
    numeric = [n for n in NUMERIC if n + ".lua" in programs]
    if rs and numeric:
        rs = {n + ".lua": rs[n + ".lua"] for n in numeric}
        valid = [(p, r) for p, r in rs.items() if r is not None]
        above = [(p, r) for p, r in valid if r >= 1]
        lines.append("numeric programs (%s): tandem-jit below luajit -joff on %d of %d%s%s"
                     % (", ".join(numeric), len(valid) - len(above), len(valid),
                        "; not on " + listed(above) if above else "", invalid(rs)))
    rs = ratios.get(("tandem-jit", "tandem-interp"))
    if rs:
        slower = [(p, r) for p, r in rs.items() if r is not None and r > 1]
        lines.append("programs slower under the JIT than under the interpreter: %s "
                     "(target: none)%s" % (listed(slower) or "none", invalid(rs)))
    if lines:
        print()
        print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description="Run Tandem's benchmark programs.")
    ap.add_argument("--runs", type=int, default=5, help="runs per implementation (default 5)")
    ap.add_argument("--tandem", default=th.default_tandem(),
                    help="tandem binary (default $TANDEM_BIN, else build/tandem)")
    ap.add_argument("--lua5.4", dest="lua", default="lua5.4", help="reference interpreter")
    ap.add_argument("--luajit", default="luajit",
                    help="luajit binary, run as luajit-joff (-joff) and luajit")
    ap.add_argument("--only", action="append", default=[],
                    help="run only programs whose name contains NAME (repeatable)")
    ap.add_argument("--config", action="append", default=[], metavar="NAME=ARGS",
                    help="a tandem configuration: NAME and the options (split like a "
                    "shell) passed to tandem before the program (repeatable; default "
                    + " and ".join(DEFAULT_CONFIGS) + ")")
    ap.add_argument("--extra-arg", action="append", default=[],
                    help="option passed to tandem before the program, in every "
                    "configuration, after its own options (repeatable)")
    ap.add_argument("--suite", action="store_true",
                    help="run bench/suite's single-threaded programs instead of bench/programs")
    ap.add_argument("--scale", default="1",
                    help="with --suite: the scale argument passed to every program (default 1)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run")
    ap.add_argument("--csv", help="also write the results to this CSV file")
    opts = ap.parse_args(th.join_extra_args(sys.argv[1:]))

    impls = []
    configs = parse_configs(opts.config, opts.extra_arg)
    tandem = th.find_tandem(opts.tandem)
    if tandem:
        impls += [Impl(name, "tandem", tandem, args) for name, args in configs]
    else:
        print("note: no tandem binary at %s; skipping tandem" % opts.tandem)
    lua = th.find_lua(opts.lua)
    if lua:
        impls.append(Impl("lua5.4", "lua5.4", lua))
    else:
        print("note: %s not found; skipping it" % opts.lua)
    luajit = th.find_lua(opts.luajit)
    if luajit:
        impls.append(Impl("luajit-joff", "luajit", luajit, ["-joff"]))
        impls.append(Impl("luajit", "luajit", luajit))
    else:
        print("note: %s not found; skipping luajit-joff and luajit" % opts.luajit)
    if not impls:
        sys.exit("run.py: no implementation to run")
    names = [i.name for i in impls]
    tandems = [i.name for i in impls if i.family == "tandem"]
    if "lua5.4" not in names:
        print("note: without lua5.4 the outputs are not checked")

    folder = SUITE if opts.suite else PROGRAMS
    programs = sorted(f for f in os.listdir(folder)
                      if f.endswith(".lua") and not (opts.suite and f.startswith("mt_")))
    prog_args = [opts.scale] if opts.suite else []
    if opts.only:
        programs = [p for p in programs if any(o in p[:-4] for o in opts.only)]
    if not programs:
        sys.exit("run.py: no program matches")

    print("programs: %s%s" % (os.path.relpath(folder, th.REPO),
                              " (scale %s)" % opts.scale if opts.suite else ""))
    print("runs: %d per implementation, interleaved; implementations:" % opts.runs)
    width = max(len(n) for n in names)
    for impl in impls:
        print("  %-*s  %s" % (width, impl.name, shlex.join(impl.argv)))
    results = {}
    for prog in programs:
        stats = {i.name: Stats() for i in impls}
        reference = None
        for _ in range(opts.runs):
            # lua5.4 first in each round, so the reference exists when others run
            for impl in sorted(impls, key=lambda i: i.name != "lua5.4"):
                st = stats[impl.name]
                # exact_rss: the program's own peak RSS, not this Python process's
                r = th.run_once(impl.argv + [prog] + prog_args, cwd=folder, timeout=opts.timeout, exact_rss=True)
                status, out, err = r.code, r.stdout, r.stderr
                st.times.append(r.seconds)
                st.cpu.append(r.cpu_s)
                st.rss_kb.append(r.rss_kb)
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

    # Ratio columns (numerator, denominator): every tandem configuration
    # against lua5.4, then the JIT against tandem's interpreter and LuaJIT's.
    pairs = []
    if "lua5.4" in names:
        pairs += [(t, "lua5.4") for t in tandems]
    for den in ("tandem-interp", "luajit-joff"):
        if "tandem-jit" in tandems and den in names:
            pairs.append(("tandem-jit", den))
    # ratios[(num, den)][prog]: median time ratio, None when either is invalid
    ratios = {(a, b): {p: ratio(results[p][a], results[p][b]) for p in programs}
              for a, b in pairs}

    print()
    header = (["program"] + ["%s s" % n for n in names]
              + ["%s/%s" % pair for pair in pairs])
    rows = []
    for prog in programs:
        rows.append([prog[:-4]] + [fmt_time(results[prog][n]) for n in names]
                    + [fmt_ratio(ratios[pair][prog]) for pair in pairs])
    if pairs:
        rows.append(["geometric mean"] + [""] * len(names)
                    + [fmt_ratio(geomean(ratios[pair].values())) for pair in pairs])
    print("wall-clock seconds: median [min,max]")
    print_table(header, rows)
    print_targets(programs, ratios)

    print()
    rss_pairs = [(t, "lua5.4") for t in tandems] if "lua5.4" in names else []
    header = (["program"] + ["%s MB" % n for n in names]
              + ["%s/%s" % pair for pair in rss_pairs])
    rows = []
    r_rss = {pair: [] for pair in rss_pairs}
    for prog in programs:
        st = results[prog]
        row = [prog[:-4]] + ["%.1f" % (st[n].rss_median() / 1024.0) for n in names]
        for a, b in rss_pairs:
            r = st[a].rss_median() / st[b].rss_median()
            r_rss[(a, b)].append(r)
            row.append("%.2f" % r)
        rows.append(row)
    if rss_pairs:
        rows.append(["geometric mean"] + [""] * len(names)
                    + [fmt_ratio(geomean(r_rss[pair])) for pair in rss_pairs])
    print("peak RSS: median")
    print_table(header, rows)

    if opts.csv:
        # The columns up to "problems" are the ones the runner always wrote;
        # extra_args holds every option passed before the program (a tandem
        # configuration's own and --extra-arg's, or luajit-joff's -joff) and
        # family says which implementation a row's name is a variant of.
        with open(opts.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["program", "implementation", "extra_args", "runs", "valid",
                        "median_s", "min_s", "max_s", "cpu_median_s", "rss_median_kb",
                        "problems", "family"])
            for prog in programs:
                for impl in impls:
                    st = results[prog][impl.name]
                    w.writerow([prog[:-4], impl.name, shlex.join(impl.args), len(st.times),
                                int(st.valid), "%.4f" % st.median(), "%.4f" % min(st.times),
                                "%.4f" % max(st.times), "%.4f" % statistics.median(st.cpu),
                                int(st.rss_median()),
                                "; ".join(sorted(set(st.problems))), impl.family])
        print("\nwrote %s" % opts.csv)
    invalid = any(not results[p][n].valid for p in programs for n in names)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
