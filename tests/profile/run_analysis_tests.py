#!/usr/bin/env python3
"""The analyses end to end (path profiling first).

  pattern      paths_pattern.lua: a loop whose branch takes a known pattern; the Ball-Larus
               path numbers, their counts, decoded blocks and lines are computed by hand
               (sequential and concurrent), and the text report says the same.
  oracle       every paths_*.lua, with the path limit at its default (paths_wide.lua has 2^40
               paths: the fallback cuts it) and lowered (-Xpathprof.limit: cuts
               everywhere): the oracle (-Xpathprof.oracle, builds configured with
               -DTANDEM_PATH_ORACLE=ON; --require-oracle fails without), which cuts the executed
               block sequences at back edges and exits without any path numbering, counts
               exactly the decoded Ball-Larus profile; also on tests/threads programs,
               native and green (same run, so equal even though not deterministic).
  conc==seq    every analysis that exists (the names `tandem` lists), on the paths_*.lua
               programs and shape.lua: the concurrent report (default ring, and the
               smallest ring, which makes the producer block and wrap) equals the
               sequential one exactly.
  programs     every deterministic tests/programs/*/*.lua with all six analyses at once
               (json) gives identical reports sequential and concurrent (small ring), and
               with the JIT and without (inputsize: activations and instruction costs).
  stats        in every concurrent exhaustive run above: -Xstats says produced == consumed
               and nothing dropped.
  annotate     -Xprofile.format=annotate (pathprof's line counts in the source) against
               lua5.4's line hook (line_hook_oracle.lua), sequential and concurrent, JIT and
               interpreter, on programs where the two count the same lines; the functions
               where a path count cannot (a frame left by an error, a coroutine suspended
               for good, cut paths) are left out by name, and cut paths are said in the report.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import tandem_harness as th
from tandem_harness import json_docs

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "programs")
# All five. cachesim's hits and misses depend on the heap addresses of the run, which differ
# between a sequential and a concurrent run of a program that allocates (the analyzer thread
# and the collector's timing change the layout; address-space randomisation too): for it,
# the address-independent part is compared (accesses, loads, stores, accesses per function
# and per source line);
# conc==seq above and known_cache.lua check the rest on programs whose layout holds.
# inputsize likewise: its input sizes count distinct cell addresses, and an address the
# collector frees and reuses at another moment is another cell; its activations and their
# costs in instructions (interpreter and JIT alike) and its event counts are compared.
ALL_ANALYSES = "methodcount,callgraph,calltree,pathprof,cachesim,inputsize"


def comparable(report):
    """The JSON documents of [report], cachesim's and inputsize's reduced to what does not
    depend on addresses."""
    docs = json_docs(report)
    out = []
    for d in docs:
        if d.get("analysis") == "cachesim":
            d = {"accesses": d["accesses"], "loads": d["loads"], "stores": d["stores"],
                 "functions": sorted((f["function"], f["accesses"], tuple((ln["line"], ln["accesses"]) for ln in f["lines"]))
                                     for f in d["functions"])}
        elif d.get("analysis") == "inputsize":
            d = {"loads": d["loads"], "stores": d["stores"], "inputs": d["inputs"],
                 "functions": sorted((f["function"], f["calls"], f["cost"]) for f in d["functions"])}
        out.append(d)
    return out
PATH_PROGRAMS = ["paths_pattern.lua", "paths_loops.lua", "paths_calls.lua", "paths_wide.lua"]
THREAD_PROGRAMS = ["basics.lua", "pipeline.lua", "pingpong.lua", "mutex_counter.lua"]

# tests/programs that are not deterministic from run to run (time, randomness, collection
# timing visible to the program) or not programs (syntax errors).
EXCLUDE_DIRS = {"syntax_errors"}
EXCLUDE = {
    "math/random.lua",          # math.random without a seed
    "os/clock_time_date.lua",   # clock and time
    "weak/automatic.lua",       # which finalizers ran by when: collection timing
    "load/binary_prefix.lua",   # loads a file named by os.tmpname, whose name names its functions
}

check = th.Checks()


def run(tandem, args, cwd=HERE, env=None, stdin=None, timeout=300):
    e = dict(os.environ)
    e.setdefault("HOME", "/")
    e["TANDEM_TEST_ENV"] = "tandem test value"
    if env:
        e.update(env)
    r = th.run_once(th.tandem_argv(tandem, *args), cwd=cwd, env=e, stdin=stdin, timeout=timeout)
    return r.code, r.out, r.err


def check_stats(name, err, required=True):
    """-Xstats of a concurrent exhaustive run: everything produced was consumed. [required]:
    False for programs that leave through os.exit, which prints no statistics."""
    t = th.parse_stats(err).total
    if t is None and not required:
        return
    if check(f"{name}: stats line", t is not None, err[-2000:]):
        check.bump("stats")
        check(f"{name}: produced == consumed", th.nothing_lost(t), t["line"])


def profile(tandem, prog, analyses, mode, fmt="json", env=None, cwd=HERE, extra=(), stdin=None,
            args=()):
    """Runs [prog] with the analyses in [mode] (sequential / concurrent / small); returns
    (exit, stdout, report text, stderr)."""
    fd, out = tempfile.mkstemp(prefix="tandem_analysis_", suffix=".prof")
    os.close(fd)
    os.unlink(out)
    opts = [f"-Xprofile={analyses}", f"-Xprofile.format={fmt}", f"-Xprofile.out={out}", *extra, *th.mode_opts(mode)]
    code, so, se = run(tandem, [*opts, prog, *args], cwd=cwd, env=env, stdin=stdin)
    rep = ""
    if os.path.exists(out):
        with open(out, encoding="utf-8", errors="replace") as f:
            rep = f.read()
        os.unlink(out)
    if mode != "sequential":
        with open(os.path.join(cwd, prog), encoding="utf-8", errors="replace") as f:
            exits = "os.exit" in f.read()
        check_stats(f"{prog} {analyses} {mode}", se, required=not exits)
    return code, so, rep, se


def paths_of(doc):
    """{(fid, start, end, blocks): count} of a pathprof JSON document."""
    c = collections.Counter()
    for p in doc["paths"]:
        c[(p["fid"], p["start"], p["end"], tuple(p["blocks"]))] += p["count"]
    return c


def read_oracle(path):
    c = collections.Counter()
    with open(path) as f:
        for line in f:
            count, fid, start, end, blocks = line.split()
            c[(int(fid), start, end, tuple(int(b) for b in blocks.split(",")))] += int(count)
    return c


# ----------------------------------------------------------------------------------------
# pattern: hand-computed path numbers
# ----------------------------------------------------------------------------------------
# f's bytecode (tandem -Xdump=bytecode paths_pattern.lua) has these blocks:
#   B0 pcs 0-5   (lines 3 4)   ... FORPREP            -> B1 (fall), B5 (skip the loop)
#   B1 pcs 6-8   (line 5)      MODK EQI JMP           -> B2 (i % 3 == 0), B3 (else)
#   B2 pcs 9-10  (line 6)      ADDI JMP               -> B4
#   B3 pc 11     (line 8)      ADDI                   -> B4 (falls)
#   B4 pc 12     (line 4)      FORLOOP                -> B5 (fall), B1 (back edge)
#   B5 pcs 13-15 (line 11)     ... RETURN1            -> EXIT
#   (pc 16, RETURN0, is unreachable)
# NumPaths: B5 1; B4 1 + 1 (back edge -> EXIT) = 2, Val(B4->B5) 0, Val(B4->EXIT) 1;
# B3 2; B2 2; B1 2 + 2 = 4, Val(B1->B2) 0, Val(B1->B3) 2; B0 4 + 1 = 5, Val(B0->B1) 0,
# Val(B0->B5) 4; ENTRY: -> B0 Val 0, -> B1 (the loop head) Val 5; 9 paths.
# f(30): i = 1 enters from the entry and takes "else" (0 + 2 + 1 = path 3); i = 2..29 are
# loop paths, "then" for the 9 multiples of 3 (5 + 0 + 1 = 6), "else" for the other 19
# (5 + 2 + 1 = 8); i = 30 takes "then" and leaves the loop (5 + 0 + 0 = 5).
PATTERN = {
    3: (1, "entry", "back", [0, 1, 3, 4], [3, 4, 5, 8, 4]),
    6: (9, "loop", "back", [1, 2, 4], [5, 6, 4]),
    8: (19, "loop", "back", [1, 3, 4], [5, 8, 4]),
    5: (1, "loop", "return", [1, 2, 4, 5], [5, 6, 4, 11]),
}


def test_pattern(tandem):
    for mode in ("sequential", "concurrent", "small"):
        code, out, rep, err = profile(tandem, "paths_pattern.lua", "pathprof", mode)
        if not check(f"pattern {mode}: exit", code == 0 and out == "1020\n", f"{code} {out!r} {err!r}"):
            continue
        docs = json_docs(rep)
        check(f"pattern {mode}: one document", len(docs) == 1 and docs[0]["analysis"] == "pathprof", rep)
        doc = docs[0]
        f = {p["path"]: p for p in doc["paths"] if p["function"] == "f (paths_pattern.lua:2)"}
        got = {n: (p["count"], p["start"], p["end"], p["blocks"], p["lines"]) for n, p in f.items()}
        check(f"pattern {mode}: f's paths", got == PATTERN, f"\n got {got}\nwant {PATTERN}")
        main = [p for p in doc["paths"] if p["function"] == "main chunk (paths_pattern.lua)"]
        check(f"pattern {mode}: main chunk", len(main) == 1 and main[0]["path"] == 0 and main[0]["count"] == 1
              and main[0]["blocks"] == [0] and main[0]["start"] == "entry" and main[0]["end"] == "return", main)
        check(f"pattern {mode}: total", doc["total_paths"] == 31, doc["total_paths"])
    code, out, rep, err = profile(tandem, "paths_pattern.lua", "pathprof", "sequential", fmt="text")
    want = "f (paths_pattern.lua:2) path 8: lines 5 8 4 (blocks 1 3 4; loop to back) 19 times (61.29%)"
    check("pattern text: hottest path first", rep.splitlines()[2:3] == [want], rep)
    check("pattern text: header", rep.startswith("pathprof: 31 paths run, 5 distinct paths in 2 functions\n"), rep)


# ----------------------------------------------------------------------------------------
# oracle
# ----------------------------------------------------------------------------------------
def oracle_run(name, tandem, prog, mode, tmp, extra=(), **kw):
    """Profiles [prog] with pathprof and the path oracle; checks that the two agree and
    returns the Ball-Larus paths (None when the run failed)."""
    ofile = os.path.join(tmp, "oracle.txt")
    if os.path.exists(ofile):
        os.unlink(ofile)
    code, out, rep, err = profile(tandem, prog, "pathprof", mode, extra=[*extra, f"-Xpathprof.oracle={ofile}"],
                                  **kw)
    if not check(f"{name}: exit", code == 0, f"{code} {err[-2000:]!r}"):
        return None
    bl = paths_of(json_docs(rep)[0])
    orc = read_oracle(ofile)
    check(f"{name}: Ball-Larus == oracle", bl == orc and len(bl) > 0,
          f"\n only Ball-Larus: {dict(bl - orc)}\n only oracle: {dict(orc - bl)}")
    return bl


def test_oracle(tandem, tmp):
    for prog in PATH_PROGRAMS:
        cut_seen = False
        for limit in (None, "8", "20", "100"):
            for mode in ("sequential", "concurrent"):
                name = f"oracle {prog} limit={limit or 'default'} {mode}"
                bl = oracle_run(name, tandem, prog, mode, tmp, extra=[f"-Xpathprof.limit={limit}"] if limit else [])
                if bl is None:
                    continue
                ends = {k[2] for k in bl}
                cut_seen |= "cut" in ends
                if limit is None:
                    # 2^40 paths in wide(): cut; everything else fits 32 bits
                    check(f"{name}: cut only when needed", ("cut" in ends) == (prog == "paths_wide.lua"), ends)
        check(f"oracle {prog}: the lowered limits made cuts", cut_seen)
    # Language threads: not deterministic from run to run, but the oracle and the Ball-Larus
    # profile watch the same run, so they must agree exactly anyway.
    threads = os.path.join(HERE, "..", "threads")
    for prog in THREAD_PROGRAMS:
        for model in ("native", "green"):
            oracle_run(f"oracle threads/{prog} {model}", tandem, prog, "concurrent", tmp, cwd=threads,
                       extra=[f"-Xthreads={model}"])


# ----------------------------------------------------------------------------------------
# concurrent == sequential, every analysis
# ----------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------
# annotate
# ----------------------------------------------------------------------------------------
# Program -> the functions (by their first line; 0: the main chunk) whose counts differ from
# the line hook's by design (prof_pathprof.c, "Annotate"): paths that never ended.
ANNOTATE_PROGRAMS = {
    "paths_pattern.lua": {}, "paths_loops.lua": {}, "shape.lua": {}, "known_graph.lua": {},
    "known_tree.lua": {}, "known_stale.lua": {},
    "paths_calls.lua": {8: "risky: frames left by its errors end no path"},
    "known_calls.lua": {10: "a coroutine suspended at the end: its last path never ends"},
}


def annotate_counts(report):
    """{(first line of the function, line): count} of an annotate report, and the names of
    the functions said to have cut paths."""
    got, cut, fn = collections.Counter(), set(), None
    for line in report.splitlines():
        m = re.match(r"-- (.*): \d+ line entries", line)
        if m:
            name = m.group(1)
            mm = re.search(r":(\d+)[)>]$", name)
            fn = int(mm.group(1)) if mm else 0
            if "its paths were cut" in line:
                cut.add(name)
            continue
        m = re.match(r"\s+(\d+)\s+(\d+)(  |$)", line)
        if m and fn is not None:
            got[(fn, int(m.group(2)))] += int(m.group(1))
    return got, cut


def line_hook_counts(prog):
    """lua5.4's line hook counts for [prog], as annotate_counts keys them; None without lua5.4."""
    try:
        r = subprocess.run(["lua5.4", os.path.join(HERE, "line_hook_oracle.lua"), prog], cwd=HERE,
                           capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        return None
    want = collections.Counter()
    for line in r.stderr.splitlines():
        m = re.match(r"(\d+):(\d+) (\d+)$", line)
        if m:
            want[(int(m.group(1)), int(m.group(2)))] += int(m.group(3))
    return want


def test_annotate(tandem):
    for prog, skip in ANNOTATE_PROGRAMS.items():
        want = line_hook_counts(prog)
        if want is None:
            print("skip annotate: lua5.4 is not installed (the line-hook oracle)")
            return
        want = {k: v for k, v in want.items() if k[0] not in skip}
        for mode in ("sequential", "concurrent"):
            for jit in ("on", "off") if has_jit(tandem) and not th.jit_turned_off() else ("off",):
                name = f"annotate {prog} {mode} jit={jit}"
                code, out, rep, err = profile(tandem, prog, "pathprof", mode, fmt="annotate", extra=[f"-Xjit={jit}"])
                if not check(f"{name}: exit", code == 0, f"{code} {err[-1000:]!r}"):
                    continue
                got, cut = annotate_counts(rep)
                got = {k: v for k, v in got.items() if k[0] not in skip}
                diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
                check(f"{name}: == lua5.4's line hook", not diff and len(got) > 0,
                      f"(line: annotate, hook) {sorted(diff.items())[:10]}")
                check(f"{name}: no cut paths", not cut, cut)
    # A function with more than 2^32 paths is cut, and its header says so.
    code, out, rep, err = profile(tandem, "paths_wide.lua", "pathprof", "sequential", fmt="annotate")
    got, cut = annotate_counts(rep)
    check("annotate paths_wide.lua: cut paths said", cut == {"wide (paths_wide.lua:3)"}, cut)
    # The source is shown: paths_pattern.lua's branch line with its count.
    code, out, rep, err = profile(tandem, "paths_pattern.lua", "pathprof", "sequential", fmt="annotate")
    check("annotate text: the source with counts",
          re.search(r"^ +10 +6 +a = a \+ 1$", rep, re.M) is not None and rep.startswith("pathprof annotate: "), rep)
    # Analyses with no annotate report say so.
    code, out, rep, err = profile(tandem, "paths_pattern.lua", "methodcount", "sequential", fmt="annotate")
    check("annotate methodcount: refused with a message", "methodcount has no report in this -Xprofile.format" in err,
          err[-500:])


def analysis_names(tandem):
    code, out, err = run(tandem, ["-Xprofile=nosuchanalysis", "paths_pattern.lua"])
    m = re.search(r"valid analyses: (.*)$", err, re.M)
    return [n.strip() for n in m.group(1).split(",")] if m else ["methodcount", "pathprof"]


def test_conc_eq_seq(tandem):
    names = analysis_names(tandem)
    check("pathprof is listed", "pathprof" in names, names)
    for prog in PATH_PROGRAMS + ["shape.lua"]:
        for an in names:
            reps = {}
            modes = ("sequential", "concurrent", "small", "small-self", "small-adaptive")
            for mode in modes:
                code, out, rep, err = profile(tandem, prog, an, mode)
                check(f"{prog} {an} {mode}: exit", code == 0 and rep, f"{code} {err[-2000:]!r}")
                reps[mode] = rep
            for mode in modes[1:]:
                a, b = reps[mode], reps["sequential"]
                check(f"{prog} {an}: {mode} == sequential", a == b, f"\n{str(a)[:3000]}\n--- vs ---\n{str(b)[:3000]}")
            # Sharded analysis (-Xanalysis.shards): the analyses that split, split 2 and 4
            # ways (one analyzer thread per shard), on the smallest ring too.
            if an in ("methodcount", "cachesim"):
                for k, mode in ((2, "concurrent"), (4, "small")):
                    code, out, rep, err = profile(tandem, prog, an, mode, extra=[f"-Xanalysis.shards={k}"])
                    check(f"{prog} {an} shards={k} {mode}: exit, one line per shard",
                          code == 0 and rep and err.count(" shards: 0: ") >= 1, f"{code} {err[-2000:]!r}")
                    check(f"{prog} {an} shards={k} {mode} == sequential", comparable(rep) == comparable(reps["sequential"]),
                          f"\n{rep[:3000]}\n--- vs ---\n{reps['sequential'][:3000]}")
    return names


def test_full_ring_threads(tandem):
    """Multi-threaded programs on the smallest rings, under every full-ring policy
    (-Xcab.full) with 1, 2 and 4 analyzer threads: the merged profile (counts per function and
    call-graph edges do not depend on the interleaving) equals the sequential one."""
    threads = os.path.join(HERE, "..", "threads")
    an = "methodcount,callgraph,cachesim"
    for prog in THREAD_PROGRAMS:
        _, _, want, err = profile(tandem, prog, an, "sequential", cwd=threads)
        check(f"threads/{prog} sequential: report", want != "", err[-1000:])
        for full in th.FULL_RING:
            for n in (1, 2, 4):
                mode = "small" if full == "block" else "small-" + full
                code, _, rep, err = profile(tandem, prog, an, mode, cwd=threads, extra=[f"-Xanalyzers={n}"])
                same = code == 0 and rep != "" and comparable(rep) == comparable(want)
                check(f"threads/{prog} full={full} analyzers={n} == sequential", same,
                      f"{code}\n{rep[:2000]}\n--- vs ---\n{want[:2000]}\n{err[-1000:]}")


# ----------------------------------------------------------------------------------------
# every deterministic program
# ----------------------------------------------------------------------------------------
def program_cases():
    cases = []
    for d in sorted(os.listdir(PROGRAMS)):
        full = os.path.join(PROGRAMS, d)
        if not os.path.isdir(full) or d in EXCLUDE_DIRS:
            continue
        for f in sorted(os.listdir(full)):
            if not f.endswith(".lua") or f.startswith("mod_") or f"{d}/{f}" in EXCLUDE:
                continue
            cases.append((d, f))
    return cases


def sides(d, f):
    """(folder, stdin, args, tandem options) of the tests/programs case d/f (its side files)."""
    cwd = os.path.join(PROGRAMS, d)
    stem = os.path.join(cwd, f[:-4])
    stdin = open(stem + ".stdin", "rb").read() if os.path.exists(stem + ".stdin") else b""
    args = open(stem + ".args").read().split("\n")[:-1] if os.path.exists(stem + ".args") else []
    opts = open(stem + ".opts").read().split() if os.path.exists(stem + ".opts") else []
    return cwd, stdin, args, opts


def one_program(tandem, d, f):
    cwd, stdin, args, opts = sides(d, f)
    # The concurrent side on the smallest ring, with each full-ring policy (-Xcab.full) in
    # turn from one program to the next: all three are covered at no extra run.
    small = ("small", "small-self", "small-adaptive")[sum(map(ord, d + f)) % 3]
    res = {}
    for mode in ("sequential", small):
        res[mode] = profile(tandem, f, ALL_ANALYSES, mode, cwd=cwd, stdin=stdin, args=args,
                            extra=opts)
    (c1, o1, r1, e1), (c2, o2, r2, e2) = res["sequential"], res[small]
    name = f"programs {d}/{f} ({small})"
    check(f"{name}: same run", (c1, o1) == (c2, o2), f"{c1} {c2}")
    check(f"{name}: report written", r1 != "", e1[-1000:])
    try:
        same = comparable(r1) == comparable(r2)
    except (ValueError, KeyError) as e:
        same = False
        r2 = f"{e!r}\n{r2}"
    check(f"{name}: concurrent == sequential", same, f"\n{r2[:2000]}\n--- vs ---\n{r1[:2000]}")
    return name


# Every analysis runs compiled code: the JIT emits the instrumented interpreter's events
# (jit/README.md). Their profiles must be the interpreter's, concurrent (small rings, so the
# JIT's enqueues wrap and block, and its reservations wait) and sequential.
JIT_ANALYSES = ALL_ANALYSES


def one_program_jit(tandem, d, f):
    cwd, stdin, args, opts = sides(d, f)
    opts = [o for o in opts if not o.startswith("-Xjit")]
    runs = {}
    for jit, mode in (("off", "small"), ("on", "small"), ("on", "sequential")):
        runs[jit, mode] = profile(tandem, f, JIT_ANALYSES, mode, cwd=cwd, stdin=stdin, args=args,
                                  extra=opts + [f"-Xjit={jit}"])
    name = f"programs {d}/{f} (JIT, {JIT_ANALYSES})"
    ref = runs["off", "small"]
    check(f"{name}: report written", ref[2] != "", ref[3][-1000:])
    for key in (("on", "small"), ("on", "sequential")):
        r = runs[key]
        check(f"{name} {key}: same run", r[:2] == ref[:2], f"{r[0]} {ref[0]}")
        try:
            same = comparable(r[2]) == comparable(ref[2])
        except (ValueError, KeyError) as e:
            same = False
        check(f"{name} {key}: == the interpreter's profile", same, f"\n{r[2][:2000]}\n--- vs ---\n{ref[2][:2000]}")
    return name


def test_jit(tandem, jobs):
    # the JIT does run while profiling, and not with the path oracle (an interpreter loop)
    prog = os.path.join(PROGRAMS, "functions", "recursion.lua")
    code, _, err = run(tandem, ["-Xdump=jit", f"-Xprofile={JIT_ANALYSES}", "-Xprofile.out=/dev/null", prog])
    check("JIT: compiles while every analysis profiles", code == 0 and "jit: " in err, err[-500:])
    if has_oracle(tandem):
        fd, orc = tempfile.mkstemp(prefix="tandem_oracle_")
        os.close(fd)
        code, _, err = run(tandem, ["-Xdump=jit", "-Xprofile=pathprof", "-Xprofile.out=/dev/null",
                                    f"-Xpathprof.oracle={orc}", prog])
        os.unlink(orc)
        check("JIT: not used with the path oracle", code == 0 and "jit: " not in err, err[-500:])
    cases = program_cases()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        list(ex.map(lambda c: one_program_jit(tandem, *c), cases))
    return len(cases)


def test_programs(tandem, jobs):
    cases = program_cases()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        list(ex.map(lambda c: one_program(tandem, *c), cases))
    return len(cases)


def xoptions(tandem):
    """What `tandem -X` lists: which optional parts this build has."""
    return th.run_once([tandem, "-X"]).out


def has_oracle(tandem):
    return "-Xpathprof.oracle" in xoptions(tandem)


def has_jit(tandem):
    return "built without the JIT" not in xoptions(tandem)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="comma-separated: pattern, oracle, conc, programs, jit, annotate")
    ap.add_argument("--require-oracle", action="store_true",
                    help="fail, instead of skipping the oracle checks, if the build has no path oracle")
    ap.add_argument("--skip-folder", action="append", default=[], metavar="NAME",
                    help="leave out this tests/programs folder (sanitizer builds: the exact-collection ones)")
    a = ap.parse_args()
    EXCLUDE_DIRS.update(a.skip_folder)
    tandem = th.find_tandem(a.tandem, required=True)
    only = set(a.only.split(",")) if a.only else {"pattern", "oracle", "conc", "programs", "jit", "annotate"}
    if "oracle" in only and not has_oracle(tandem):
        if a.require_oracle:
            print("FAIL: this tandem has no path oracle (configure with -DTANDEM_PATH_ORACLE=ON)")
            return 1
        print("oracle checks skipped: this tandem has no path oracle (-DTANDEM_PATH_ORACLE=ON builds it)")
        only.discard("oracle")
    if "jit" in only and not has_jit(tandem):
        print("JIT checks skipped: this tandem is built without the JIT")
        only.discard("jit")
    if "jit" in only and th.jit_turned_off():
        # they switch the JIT on themselves, which TANDEM_EXTRA_ARGS=-Xjit=off is there to avoid
        print("JIT checks skipped: $TANDEM_EXTRA_ARGS turns the JIT off")
        only.discard("jit")
    tmp = tempfile.mkdtemp(prefix="tandem_analysis_")
    summary = []
    if "pattern" in only:
        test_pattern(tandem)
        summary.append("pattern")
    if "oracle" in only:
        test_oracle(tandem, tmp)
        summary.append("oracle")
    if "conc" in only:
        names = test_conc_eq_seq(tandem)
        test_full_ring_threads(tandem)
        summary.append(f"conc==seq ({', '.join(names)})")
    if "programs" in only:
        n = test_programs(tandem, a.jobs)
        summary.append(f"programs ({n})")
    if "jit" in only:
        n = test_jit(tandem, a.jobs)
        summary.append(f"JIT == interpreter, {JIT_ANALYSES} ({n} programs)")
    if "annotate" in only:
        test_annotate(tandem)
        summary.append(f"annotate == line hook ({len(ANNOTATE_PROGRAMS)} programs)")
    return check.finish(f"{'; '.join(summary)}; {check.counts['stats']} concurrent runs with produced == consumed "
                        f"checked")


if __name__ == "__main__":
    sys.exit(main())
