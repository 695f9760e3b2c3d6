#!/usr/bin/env python3
"""The analyses against profiles known by construction, and their output formats parsed back.

  methodcount  known_calls.lua: exact calls per function (Lua calls, tail calls, calls from C,
               a coroutine, a metamethod), sequential, concurrent and concurrent on the
               smallest ring.
  callgraph    known_graph.lua, known_tree.lua: exact edges caller -> callee, two call sites of
               one edge told apart with their counts (the sites' pcs taken from -Xdump), a
               call through pcall (edge from the Lua caller, site "C").
  calltree     known_tree.lua, known_graph.lua: exact counts per calling context (a recursion
               six deep, the same function in several contexts, a "[C]" node for pcall) and
               the exact histogram of depth-two subtree patterns.
  stale        known_stale.lua: pcall after a Lua call at the same depth has returned.
  cachesim     known_cache.lua: arrays built without any heap event, then accessed in known
               patterns; exact accesses, hits, misses, evictions and back-invalidations for
               both levels, a pattern where FIFO and LRU differ checked under both, and an L2
               small enough to evict lines that are hot in L1 (inclusion); appends to an
               empty table: one store event each (counts only); misses per source line
               exactly (a one-line strided walk, JIT and interpreter), and every function's
               lines summing to its counts.
  formats      json for every analysis agrees with the text report (and several analyses in
               one file give the documents of the single runs); folded stacks sum to the call
               tree; callgrind parsed here and by callgrind_annotate; -Xprofile.out leaves no
               temporary file.
  sampling     -Xcab.mode=sampling -Xsample.rate=100% with a ring that holds the whole run
               (the analyzer cannot fall behind) equals the exhaustive profile (methodcount,
               callgraph, calltree, pathprof); at a lower rate the reports say "estimates".
  threads      known_threads.lua (exact per-thread call trees by hand) and tests/threads
               programs, native and green (1 and 2 carriers): per-thread call trees,
               patterns, method counts (and known_threads.lua's whole methodcount, calltree,
               pathprof reports) equal sequential and concurrent.
  failing      known_fails.lua (uncaught error three frames deep): the profile is written
               whole (exact counts) for methodcount, callgraph, calltree (and pathprof,
               cachesim are written), exit 1; known_forever.lua killed by SIGTERM: the profile
               is written and marked partial.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import tandem_harness as th
from tandem_harness import json_docs, mode_opts

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = os.path.join(HERE, "..", "threads")
# A ring that holds every event of the sampled runs below (the largest, shape.lua with four
# analyses, produces about 3 MB), so that a sampling consumer that falls behind loses
# nothing: the producer never laps it.
BIG_RING = ["-Xcab.size=16m", "-Xcab.chunk=4k"]
MODES = ("sequential", "concurrent", "small")

check = th.Checks()   # counts: checks, profiled runs ("runs"), concurrent runs with stats checked ("stats")
ENV = dict(os.environ)
ENV.setdefault("HOME", "/")


def run(tandem, args, cwd=HERE, timeout=300):
    r = th.run_once(th.tandem_argv(tandem, *args), cwd=cwd, env=ENV, timeout=timeout)
    return r.code, r.out, r.err


def check_stats(name, err):
    t = th.parse_stats(err).total
    if check(f"{name}: stats line", t is not None, err[-1500:]):
        check.bump("stats")
        check(f"{name}: produced == consumed, nothing dropped", th.nothing_lost(t) and t["produced"] > 0, t["line"])


def profile(tandem, prog, analyses, mode, fmt="text", extra=(), args=(), cwd=HERE, expect_code=0):
    """Runs [prog] with [analyses] in [mode], the report going to -Xprofile.out in a fresh
    directory; checks the exit status, that the report was written and that nothing else
    (a temporary file) is left in that directory, and -Xstats of concurrent runs. Returns
    (stdout, report, stderr); report is "" if none was written."""
    d = tempfile.mkdtemp(prefix="tandem_known_")
    out = os.path.join(d, "profile.out")
    try:
        opts = [f"-Xprofile={analyses}", f"-Xprofile.format={fmt}", f"-Xprofile.out={out}",
                *mode_opts(mode), *extra]
        code, so, se = run(tandem, [*opts, prog, *args], cwd=cwd)
        name = f"{prog} {analyses} {fmt} {mode} {' '.join(extra)}".rstrip()
        check(f"{name}: exit {expect_code}", code == expect_code, f"{code} {se[-2000:]!r}")
        rep = ""
        if check(f"{name}: -Xprofile.out written", os.path.exists(out), os.listdir(d)):
            with open(out, encoding="utf-8", errors="replace") as f:
                rep = f.read()
        check(f"{name}: no temporary file left", os.listdir(d) in ([], ["profile.out"]), os.listdir(d))
        if mode != "sequential" and "-Xcab.mode=sampling" not in extra:
            check_stats(name, se)
        check.bump("runs")
        return so, rep, se
    finally:
        shutil.rmtree(d, ignore_errors=True)


def one_doc(name, text, analysis):
    try:
        docs = json_docs(text)
    except ValueError as e:
        check(f"{name}: json parses", False, f"{e} {text[:500]!r}")
        return None
    if not check(f"{name}: one {analysis} document", len(docs) == 1 and docs[0].get("analysis") == analysis,
                 text[:500]):
        return None
    d = docs[0]
    check(f"{name}: common members", all(k in d for k in ("version", "sample_rate", "estimated", "partial")), d.keys())
    return d


# ----------------------------------------------------------------------------------------
# Parsers of the text reports
# ----------------------------------------------------------------------------------------
def parse_sites(s):
    sites = {}
    for part in s.split(", "):
        k, v = part.rsplit(": ", 1)
        k = "C" if k == "C" else int(k[3:]) if k.startswith("pc ") else k
        sites[k] = int(v)
    return sites


def parse_callgraph(rep):
    """({(caller, callee): (calls, {site: calls})}, total)."""
    lines = rep.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("callgraph:"))
    m = re.match(r"callgraph: (\d+) calls along (\d+) edges$", lines[i])
    edges, total = {}, None
    for l in lines[i + 1:]:
        m2 = re.match(r"\s*(\d+)\s+([\d.]+)%\s+(.*?) -> (.*)  \[(.*)\]$", l)
        if m2:
            edges[(m2.group(3), m2.group(4))] = (int(m2.group(1)), parse_sites(m2.group(5)))
            continue
        m3 = re.match(r"\s*(\d+)\s+100\.00%\s+total$", l)
        if m3:
            total = int(m3.group(1))
            break
    assert total == int(m.group(1)) and len(edges) == int(m.group(2)), (m.group(0), total, len(edges))
    return edges, total


def parse_calltree(rep):
    """({thread: {context tuple: calls}}, {context: subtree}, {(function, children): count},
    header (calls, contexts, threads)). Single-thread reports have no "thread N:" lines: the
    thread is None."""
    lines = rep.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("calltree:"))
    h = re.match(r"calltree: (\d+) calls in (\d+) contexts, (\d+) threads?$", lines[i])
    trees, subtree, stack, thread = collections.defaultdict(dict), {}, [], None
    j = i + 2
    while j < len(lines) and lines[j].strip():
        l = lines[j]
        j += 1
        mt = re.match(r"thread (\d+):$", l)
        if mt:
            thread, stack = int(mt.group(1)), []
            continue
        m = re.match(r"\s*(\d+)\s+(\d+)  ( *)(\S.*)$", l)
        if not m or l.strip().startswith("("):
            continue
        depth = len(m.group(3)) // 2
        del stack[depth:]
        stack.append(m.group(4))
        trees[thread][tuple(stack)] = int(m.group(1))
        subtree[(thread, tuple(stack))] = int(m.group(2))
    pats = {}
    for l in lines[j:]:
        m = re.match(r"\s*(\d+)\s+([\d.]+)%\s+(.*?) -> \{(.*)\}$", l)
        if m:
            kids = tuple(m.group(4).split(", ")) if m.group(4) else ()
            pats[(m.group(3), kids)] = int(m.group(1))
    return dict(trees), subtree, pats, tuple(int(x) for x in h.groups())


def calltree_json(doc):
    """({thread: {context tuple: calls}}, {(function, children): count})."""
    trees = {}
    for t in doc["threads"]:
        nodes = {n["id"]: n for n in t["nodes"]}
        paths = {}

        def path(n):
            if n["parent"] is None:
                return ()
            if n["id"] not in paths:
                paths[n["id"]] = path(nodes[n["parent"]]) + (n["function"],)
            return paths[n["id"]]
        trees[t["thread"]] = {path(n): n["calls"] for n in t["nodes"] if n["parent"] is not None}
    pats = {(p["function"], tuple(p["children"])): p["count"] for p in doc["patterns"]["list"]}
    return trees, pats


def parse_folded(rep):
    """{thread or None: {context tuple: count}}."""
    out = collections.defaultdict(dict)
    for l in rep.splitlines():
        stack, n = l.rsplit(" ", 1)
        frames = tuple(stack.split(";"))
        thread = None
        if frames[0].startswith("thread "):
            thread, frames = int(frames[0][7:]), frames[1:]
        assert frames not in out[thread], l
        out[thread][frames] = int(n)
    return dict(out)


def parse_cachesim(rep):
    lines = rep.splitlines()
    r = {}
    m = re.search(r"cachesim: (\d+) accesses \((\d+) loads, (\d+) stores\)", rep)
    r["accesses"], r["loads"], r["stores"] = map(int, m.groups())
    for lv in ("L1", "L2"):
        m = re.search(rf"^\s+{lv}\s+(\d+)\s+(\d+)\s+[\d.]+%", rep, re.M)
        r[lv.lower()] = (int(m.group(1)), int(m.group(2)))
    m = re.search(r"L2 evictions (\d+), L1 lines invalidated by them \(inclusion\) (\d+)", rep)
    r["l2_evictions"], r["back_invalidations"] = int(m.group(1)), int(m.group(2))
    fns = {}
    i = next(i for i, l in enumerate(lines) if l.startswith("misses per function"))
    for l in lines[i + 2:]:
        if l.startswith("misses per source line"):
            break
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+%\s+(.*)$", l)
        if m:
            fns[m.group(4)] = (int(m.group(3)), int(m.group(1)), int(m.group(2)))
    r["functions"] = fns
    return r


def parse_cachesim_lines(rep):
    """The text report's hottest lines: {(function, line): (accesses, L1 misses, L2 misses)}."""
    lines = rep.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("misses per source line"))
    out = {}
    for l in lines[i + 2:]:
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+%\s+.*:(\d+|\?) in (.*)$", l)
        if m:
            line = 0 if m.group(4) == "?" else int(m.group(4))
            out[(m.group(5), line)] = (int(m.group(3)), int(m.group(1)), int(m.group(2)))
    return out


def cachesim_json(doc):
    return {"accesses": doc["accesses"], "loads": doc["loads"], "stores": doc["stores"],
            "l1": (doc["l1"]["hits"], doc["l1"]["misses"]), "l2": (doc["l2"]["hits"], doc["l2"]["misses"]),
            "l2_evictions": doc["l2"]["evictions"], "back_invalidations": doc["back_invalidations"],
            "functions": {f["function"]: (f["accesses"], f["l1_misses"], f["l2_misses"]) for f in doc["functions"]}}


def parse_pathprof(rep):
    """({(function, path): (count, start, end, blocks, lines)}, total, distinct)."""
    m = re.search(r"^pathprof: (\d+) paths run, (\d+) distinct paths in (\d+) functions$", rep, re.M)
    paths = {}
    for l in rep.splitlines():
        p = re.match(r"(.*) path (\d+): lines ([\d ]*) \(blocks ([\d ]+); (\w+) to (\w+)\) (\d+) times \(([\d.]+)%\)$", l)
        if p:
            paths[(p.group(1), int(p.group(2)))] = (int(p.group(7)), p.group(5), p.group(6),
                                                    [int(x) for x in p.group(4).split()],
                                                    [int(x) for x in p.group(3).split()])
    return paths, int(m.group(1)), int(m.group(2))


def parse_callgrind(text):
    """({function: self cost}, {(caller, callee): calls}, summary, totals)."""
    selfc, calls = collections.Counter(), collections.Counter()
    fn, cfn, pending, summary, totals = None, None, False, None, None
    for l in text.splitlines():
        if l.startswith("fn="):
            fn, pending = l[3:], False
        elif l.startswith("cfn="):
            cfn = l[4:]
        elif l.startswith("calls="):
            calls[(fn, cfn)] += int(l[6:].split()[0])
            pending = True
        elif l.startswith("summary:"):
            summary = int(l.split()[1])
        elif l.startswith("totals:"):
            totals = int(l.split()[1])
        elif re.match(r"\d+ \d+$", l):
            if pending:
                pending = False  # the inclusive cost of the call above
            else:
                selfc[fn] += int(l.split()[1])
    return dict(selfc), dict(calls), summary, totals


def callgrind_annotate(path, cwd):
    """(function table {file:function: cost}, [(callee, calls)] of the "=>" lines) from
    callgrind_annotate, run where the sources are (for the annotated source)."""
    p = subprocess.run(["callgrind_annotate", "--threshold=100", path], cwd=cwd, capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        return None, None, p.stderr
    table, arrows, section, seen = {}, [], 0, False
    for l in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS$", l)
        if m:
            table["PROGRAM TOTALS"] = int(m.group(1).replace(",", ""))
        if l.startswith("Calls") and "file:function" in l:
            section = 1
            continue
        if l.startswith("-- Auto-annotated source"):
            section = 2
        if section == 1:
            m = re.match(r"\s*([\d,]+)(?: \(\s*[\d.]+%\))?\s+(\S.*)$", l)
            if m:
                table[m.group(2)] = int(m.group(1).replace(",", ""))
                seen = True
            elif l.startswith("---") and seen:
                section = 0
        elif section == 2:
            m = re.match(r"\s*[\d,]+ \(\s*[\d.]+%\)\s+=> (.*) \((\d+)x\)$", l)
            if m:
                arrows.append((m.group(1), int(m.group(2))))
    return table, arrows, p.stdout


def bytecode_calls(tandem, prog, function):
    """The pcs of the CALL instructions of [function] ('name' in the -Xdump listing), in
    code order."""
    code, out, err = run(tandem, ["-Xdump=bytecode", prog])
    pcs, inside = [], False
    for l in out.splitlines():
        if l.startswith("function ") or l.startswith("main "):
            inside = l.startswith("main ") if function == "main" else f"'{function}'" in l
        elif inside:
            m = re.match(r"\s+(\d+)\s+\[\d+\]\s+(\w+)", l)
            if m and m.group(2) == "CALL":
                pcs.append(int(m.group(1)))
    return pcs


# ----------------------------------------------------------------------------------------
# methodcount: known_calls.lua
# ----------------------------------------------------------------------------------------
def n(prog, fn, where=None):
    """A function's display name as the reports give it: "main chunk (prog)", "fn (prog:L)"
    for `local function fn` defined on line L, "function <prog:L>" for the anonymous
    function on the first line L that contains [where]."""
    if fn == "main":
        return f"main chunk ({prog})"
    with open(os.path.join(HERE, prog)) as f:
        lines = f.read().split("\n")
    if fn == "anon":
        line = next(i + 1 for i, l in enumerate(lines) if where in l and not l.startswith("--"))
        return f"function <{prog}:{line}>"
    line = next(i + 1 for i, l in enumerate(lines) if l.startswith(f"local function {fn}("))
    return f"{fn} ({prog}:{line})"


KC = "known_calls.lua"
METHODCOUNT = {
    n(KC, "f"): 22,       # 10 from the loop, 7 tail calls from g, 3 in the coroutine, 2 via __index
    n(KC, "g"): 7,
    n(KC, "k"): 21,       # k(20) .. k(0), tail calls
    n(KC, "anon", "string.gsub"): 4,  # gsub's replacement function, called from C for a, b, c, d
    n(KC, "anon", "coroutine.wrap"): 1,  # the coroutine's body, entered once, resumed three times
    n(KC, "anon", "__index"): 2,  # the __index metamethod, for t[1] and t[2]
    n(KC, "main"): 1,
}


def test_methodcount(tandem, mode):
    name = f"methodcount {mode}"
    so, rep, se = profile(tandem, KC, "methodcount", mode)
    check(f"{name}: output", so == "A,B,C,D\n", so)
    try:
        fn, total, nfun = th.parse_methodcount(rep)
    except (StopIteration, AttributeError, KeyError, AssertionError) as e:
        check(f"{name}: report parses", False, f"{e!r} {rep!r}")
        return
    check(f"{name}: counts", fn == METHODCOUNT, f"\n got {fn}\nwant {METHODCOUNT}")
    check(f"{name}: total", total == 58 and nfun == 7, (total, nfun))
    so, rep, se = profile(tandem, KC, "methodcount", mode, fmt="json")
    d = one_doc(f"{name} json", rep, "methodcount")
    if d:
        got = {f["function"]: f["calls"] for f in d["functions"]}
        check(f"{name} json: counts == text", got == METHODCOUNT and d["total_calls"] == 58, got)
        check(f"{name} json: exhaustive", d["sample_rate"] == 1 and d["estimated"] is False and d["partial"] is False, d)


# ----------------------------------------------------------------------------------------
# callgraph: known_graph.lua, known_tree.lua
# ----------------------------------------------------------------------------------------
KG = "known_graph.lua"
KT = "known_tree.lua"


def graph_expected(tandem):
    """Edges of known_graph.lua. h's two call sites of g are its two CALL instructions (the
    first before the loop, called once per h: 5; the second in the loop: 1+2+3+4+5 = 15);
    main chunk's calls: pcall's (not the edge's site: f is called by pcall, so "C") and h's,
    the second CALL of the main chunk."""
    hcalls = bytecode_calls(tandem, KG, "h")
    mcalls = bytecode_calls(tandem, KG, "main")
    check("known_graph.lua: two CALLs in h, two in the main chunk", len(hcalls) == 2 and len(mcalls) == 2,
          (hcalls, mcalls))
    if len(hcalls) != 2 or len(mcalls) != 2:
        return None
    return {
        ("[root]", n(KG, "main")): (1, {"C": 1}),
        (n(KG, "main"), n(KG, "f")): (4, {"C": 4}),            # through pcall: site C
        (n(KG, "main"), n(KG, "h")): (5, {mcalls[1]: 5}),
        (n(KG, "h"), n(KG, "g")): (20, {hcalls[0]: 5, hcalls[1]: 15}),
    }


def tree_edges(tandem):
    """Edges of known_tree.lua: main's CALLs in code order are a() (loop, 4), c() (loop, 3),
    r(5), r(2) (loop, 2), d(); c's two calls of b run once per c (4 c's); a's one call runs 5
    times; r calls itself 5 times in r(5) and twice in each r(2); d calls a, then c."""
    m = bytecode_calls(tandem, KT, "main")
    a, c, r, d = (bytecode_calls(tandem, KT, x) for x in "acrd")
    if not check("known_tree.lua: CALL counts", (len(m), len(a), len(c), len(r), len(d)) == (5, 1, 2, 1, 2),
                 (m, a, c, r, d)):
        return None
    M = n(KT, "main")
    A, B, C, R, D = n(KT, "a"), n(KT, "b"), n(KT, "c"), n(KT, "r"), n(KT, "d")
    return {
        ("[root]", M): (1, {"C": 1}),
        (M, A): (4, {m[0]: 4}),
        (M, C): (3, {m[1]: 3}),
        (M, R): (3, {m[2]: 1, m[3]: 2}),
        (M, D): (1, {m[4]: 1}),
        (A, B): (5, {a[0]: 5}),
        (C, B): (8, {c[0]: 4, c[1]: 4}),
        (R, R): (9, {r[0]: 9}),
        (D, A): (1, {d[0]: 1}),
        (D, C): (1, {d[1]: 1}),
    }


def callgraph_json(doc):
    return {(e["caller"], e["callee"]): (e["calls"], {s["site"]: s["calls"] for s in e["sites"]})
            for e in doc["edges"]}


def test_callgraph(tandem, prog, mode, want, total):
    name = f"callgraph {prog} {mode}"
    if want is None:
        return
    so, rep, se = profile(tandem, prog, "callgraph", mode)
    try:
        edges, tot = parse_callgraph(rep)
    except (StopIteration, AttributeError, ValueError, AssertionError) as e:
        check(f"{name}: report parses", False, f"{e!r} {rep!r}")
        return
    check(f"{name}: edges and sites", edges == want, f"\n got {edges}\nwant {want}")
    check(f"{name}: total", tot == total, tot)
    so, rep, se = profile(tandem, prog, "callgraph", mode, fmt="json")
    d = one_doc(f"{name} json", rep, "callgraph")
    if d:
        check(f"{name} json == text", callgraph_json(d) == edges and d["total_calls"] == tot, callgraph_json(d))


# ----------------------------------------------------------------------------------------
# calltree: known_tree.lua, known_graph.lua
# ----------------------------------------------------------------------------------------
def tree_expected():
    M = n(KT, "main")
    A, B, C, R, D = n(KT, "a"), n(KT, "b"), n(KT, "c"), n(KT, "r"), n(KT, "d")
    tree = {
        (M,): 1,
        (M, A): 4, (M, A, B): 4,             # the first loop
        (M, C): 3, (M, C, B): 6,             # the second: c calls b twice
        # r(5) once and r(2) twice: the first three levels 3 each, the last three 1 each
        (M, R): 3, (M, R, R): 3, (M, R, R, R): 3, (M, R, R, R, R): 1, (M, R, R, R, R, R): 1,
        (M, R, R, R, R, R, R): 1,
        (M, D): 1, (M, D, A): 1, (M, D, A, B): 1, (M, D, C): 1, (M, D, C, B): 2,
    }
    pats = {
        (B, ()): 13,            # every b: 4 + 6 + 1 + 2
        (A, (B,)): 5,           # 4 + 1
        (C, (B,)): 4,           # 3 + 1 (the set of callees: b once, whatever the multiplicity)
        (R, (R,)): 9,           # r(5)..r(1), and r(2), r(1) twice
        (R, ()): 3,             # r(0), three times
        (D, (A, C)): 1,
        (M, (A, C, D, R)): 1,   # closed at the end (still open when the profile is reported)
    }
    return tree, pats


def graph_tree_expected():
    M, F, G, H = n(KG, "main"), n(KG, "f"), n(KG, "g"), n(KG, "h")
    # Each of the four pcalls is a C frame at depth 2 that calls f once: the "[C]" node is
    # entered 4 times (once per C frame that calls Lua: EV_CALL's "from C" flag), f under it
    # 4 times.
    tree = {(M,): 1, (M, "[C]"): 4, (M, "[C]", F): 4, (M, H): 5, (M, H, G): 20}
    pats = {(G, ()): 20, (H, (G,)): 5, (F, ()): 4, ("[C]", (F,)): 4, (M, ("[C]", H)): 1}
    return tree, pats


def calls_only(tree):
    """The contexts that are calls: a "[C]" node counts the times a C gap was entered, it is
    not a call (not in the totals, the subtree sums or the folded stacks)."""
    return {k: v for k, v in tree.items() if k[-1] != "[C]"}


def subtree_sums(tree):
    s = collections.Counter()
    for ctx, c in calls_only(tree).items():
        for i in range(1, len(ctx) + 1):
            s[ctx[:i]] += c
    return s


def test_calltree(tandem, prog, mode, want):
    tree, pats = want
    name = f"calltree {prog} {mode}"
    so, rep, se = profile(tandem, prog, "calltree", mode)
    try:
        trees, subtree, tpats, header = parse_calltree(rep)
    except (StopIteration, AttributeError, ValueError) as e:
        check(f"{name}: report parses", False, f"{e!r} {rep!r}")
        return
    got = trees.get(None)
    check(f"{name}: contexts", list(trees) == [None] and got == tree, f"\n got {trees}\nwant {tree}")
    check(f"{name}: header", header == (sum(calls_only(tree).values()), len(tree), 1), header)
    sums = subtree_sums(tree)
    check(f"{name}: subtree column", {k[1]: v for k, v in subtree.items()} == dict(sums), subtree)
    check(f"{name}: depth-two patterns", tpats == pats, f"\n got {tpats}\nwant {pats}")
    m = re.search(r"depth-two subtree patterns: (\d+) distinct in (\d+) invocations", rep)
    check(f"{name}: patterns header", m and (int(m.group(1)), int(m.group(2))) == (len(pats), sum(pats.values())),
          m and m.group(0))
    # json and folded agree with the text
    so, rj, se = profile(tandem, prog, "calltree", mode, fmt="json")
    d = one_doc(f"{name} json", rj, "calltree")
    if d:
        jt, jp = calltree_json(d)
        check(f"{name} json == text", list(jt.values()) == [got] and jp == tpats and d["total_calls"] == header[0],
              (jt, jp))
        check(f"{name} json: pattern totals", d["patterns"]["distinct"] == len(tpats) and
              d["patterns"]["invocations"] == sum(tpats.values()), d["patterns"])
    so, rf, se = profile(tandem, prog, "calltree", mode, fmt="folded")
    try:
        folded = parse_folded(rf)
    except (ValueError, AssertionError) as e:
        check(f"{name} folded parses", False, f"{e!r} {rf!r}")
        return
    check(f"{name} folded == text", folded == {None: calls_only(got or {})}, folded)
    check(f"{name} folded: counts sum to the calls", sum(folded.get(None, {}).values()) == header[0], folded)


# ----------------------------------------------------------------------------------------
# stale frame (a returned Lua frame at the depth of a later pcall)
# ----------------------------------------------------------------------------------------
KS = "known_stale.lua"


def test_stale(tandem, mode):
    M, F, G = n(KS, "main"), n(KS, "f"), n(KS, "g")
    gsite = bytecode_calls(tandem, KS, "main")
    edges = {("[root]", M): (1, {"C": 1}), (M, G): (1, {gsite[0]: 1}), (M, F): (3, {"C": 3})}
    tree = {(M,): 1, (M, G): 1, (M, "[C]"): 3, (M, "[C]", F): 3}
    pats = {(F, ()): 3, (G, ()): 1, ("[C]", (F,)): 3, (M, ("[C]", G)): 1}
    name = f"stale frame {KS} {mode}"
    so, rep, se = profile(tandem, KS, "callgraph,calltree", mode, fmt="json")
    try:
        cg, ct = json_docs(rep)
    except ValueError as e:
        check(f"{name}: json parses", False, f"{e!r} {rep[:500]!r}")
        return
    # g returned with no event and is still on the analyzer's shadow stack at depth 2 when
    # f arrives from pcall: EV_CALL's "from C" flag ends it; main chunk -> f through "[C]".
    check(f"{name}: callgraph", callgraph_json(cg) == edges, f"\n got {callgraph_json(cg)}\nwant {edges}")
    t, p = calltree_json(ct)
    check(f"{name}: calltree contexts", list(t.values()) == [tree], f"\n got {t}\nwant {tree}")
    check(f"{name}: calltree patterns", p == pats, f"\n got {p}\nwant {pats}")


# ----------------------------------------------------------------------------------------
# cachesim: known_cache.lua
# ----------------------------------------------------------------------------------------
# known_cache.lua builds each array with a table constructor fed by a vararg call (SETLIST
# and C code: no heap event) and touches nothing else on the heap, so every event comes from
# scan or hotcold. Slots are 16 bytes; an array part is one block whose 16-byte header (size,
# lenhint, padding: TabArr, vm/vm_value.h) precedes slot 1. These blocks are above 2 KB, so
# Boehm gives them whole pages: slot i sits at page + 16*i, i.e. in line i // 4 of the block.
# Every line is cold when first touched (nothing was loaded before), so L2 misses are the
# distinct lines.
KCA = "known_cache.lua"
SCAN = n(KCA, "scan")
HOT = n(KCA, "hotcold")
FILL = n(KCA, "fill")
STRIDE = n(KCA, "stride")


def kca_line(fn, text):
    """The number of the first line of known_cache.lua after `local function fn(` that
    contains [text]."""
    with open(os.path.join(HERE, KCA)) as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(f"local function {fn}("))
    return next(i + 1 for i, l in enumerate(lines) if i > start and text in l)


# Misses per source line (EV_PC): {function: {line: (accesses, L1 misses, L2 misses)}} of each
# case, exactly (a line with no heap access has no entry). scan's write pass takes the cold
# misses, its read pass hits in L1 (small) or in L2 (big); hotcold's hot read misses when the
# line left L1 (FIFO: once and every 4th j; under an 8-line L2, when L2 evicts it) and hits in
# L2 but for the first time (or not at all under the small L2); stride's one line has them all.
SCAN_W, SCAN_R = kca_line("scan", "t[i] = i"), kca_line("scan", "local _ = t[i]")
HOT_H, HOT_X = kca_line("hotcold", "t[2]"), kca_line("hotcold", "t[2 + 4 * j]")
STRIDE_WALK = kca_line("stride", "acc + t[i]")
CACHE_LINES = {
    ("small", ""): {SCAN: {SCAN_W: (508, 128, 128), SCAN_R: (508, 0, 0)}},
    ("big", ""): {SCAN: {SCAN_W: (4096, 1025, 1025), SCAN_R: (4096, 1025, 0)}},
    ("hot", "-Xcachesim.l1=256:4 -Xcachesim.policy=lru"): {HOT: {HOT_H: (100, 1, 1), HOT_X: (100, 100, 100)}},
    ("hot", "-Xcachesim.l1=256:4 -Xcachesim.policy=fifo"): {HOT: {HOT_H: (100, 25, 1), HOT_X: (100, 100, 100)}},
    ("hot", "-Xcachesim.l1=256:4 -Xcachesim.l2=512:8 -Xcachesim.policy=lru"):
        {HOT: {HOT_H: (100, 13, 13), HOT_X: (100, 100, 100)}},
    ("stride", ""): {STRIDE: {STRIDE_WALK: (1024, 1024, 1024)}},
    ("stride", "-Xjit=off"): {STRIDE: {STRIDE_WALK: (1024, 1024, 1024)}},
}


def cache(acc, loads, stores, l1, l2, l1_evictions, l2_evictions, back, fn_name):
    return {"accesses": acc, "loads": loads, "stores": stores, "l1": l1, "l2": l2,
            "l1_evictions": l1_evictions, "l2_evictions": l2_evictions, "back_invalidations": back,
            "functions": {fn_name: (acc, l1[1], l2[1])}}


CACHE_CASES = [
    # small: 508 slots written then read: 2 * 508 accesses. Slots 1..508 cover bytes
    # 16 .. 8143 of the block: lines 0..127, 128 lines, one per L1 set (128 sets of 4 ways),
    # so the read pass hits every time: 128 L1 misses (and L2 misses), 1016 - 128 hits.
    ("small", [], cache(1016, 508, 508, (888, 128), (0, 128), 0, 0, 0, SCAN)),
    # big: 4096 slots (bytes 16 .. 65551: lines 0..1024, 1025 lines) written then read. Each
    # L1 set gets 8 or 9 of them per pass and holds 4: both passes miss on every line
    # (2050 misses, 8192 - 2050 hits); once a set is full every miss evicts: 2050 - 128*4 =
    # 1538 L1 evictions. L2 (1024 sets of 8) holds all 1025 lines: the second pass hits.
    ("big", [], cache(8192, 4096, 4096, (6142, 2050), (1025, 1025), 1538, 0, 0, SCAN)),
    # hot/cold in a 4-line fully associative L1 (256:4, one set): for j = 1..100 read H =
    # t[2], then X_j = t[2 + 4j]: 64 bytes apart, so 101 distinct lines whatever the offset.
    # LRU: H stays recent: 1 + 100 misses; 200 - 101 = 99 hits; 101 - 4 evictions.
    ("hot", ["-Xcachesim.l1=256:4", "-Xcachesim.policy=lru"],
     cache(200, 200, 0, (99, 101), (0, 101), 97, 0, 0, HOT)),
    # FIFO: H is evicted by the 4th line inserted after it, so it misses again at j = 5, 9,
    # ..., 97: 100 + 25 = 125 L1 misses (75 hits, 121 evictions); the 24 re-misses of H hit
    # in L2 (101 distinct lines: 101 L2 misses).
    ("hot", ["-Xcachesim.l1=256:4", "-Xcachesim.policy=fifo"],
     cache(200, 200, 0, (75, 125), (24, 101), 121, 0, 0, HOT)),
    # The same under LRU with an 8-line fully associative L2 (512:8): L2 sees only L1
    # misses, so H (hot in L1) is the oldest in L2 when X_8 comes and is evicted there, and
    # by inclusion dropped from L1 (a back-invalidation); it misses again at j = 9, 17, ...,
    # 97: 13 times in all. Every L1 miss is an L2 miss: 113 both; L2 evicts 113 - 8 = 105
    # lines, 12 of them H while in L1 (the X lines it evicts are older than L1's three).
    # L1 evictions: 113 misses - 4 cold fills - 12 refills of the way H left = 97.
    ("hot", ["-Xcachesim.l1=256:4", "-Xcachesim.l2=512:8", "-Xcachesim.policy=lru"],
     cache(200, 200, 0, (87, 113), (0, 113), 97, 105, 12, HOT)),
    # append: t[i] = i for i = 1..1000 on an empty table: 1000 stores, nothing else. Where
    # they land (slots of array blocks of sizes 1, 2, 4, ..., 1024, small ones not
    # page-aligned, or the table itself on the slow path) is not known by construction, so
    # only the counts are checked.
    ("append", [], {"accesses": 1000, "loads": 0, "stores": 1000, "functions": (FILL, 1000)}),
    # stride: t[1], t[5], ..., t[4093] of the 4096-slot block: 1024 reads 64 bytes apart, each
    # of its own line (lines 0..1023), all cold: 1024 misses at both levels. L1's 128 sets of
    # 4 take 512 of them, the other 512 evict; L2 holds them all. Compiled code and the
    # interpreter alike.
    ("stride", [], cache(1024, 1024, 0, (0, 1024), (0, 1024), 512, 0, 0, STRIDE)),
    ("stride", ["-Xjit=off"], cache(1024, 1024, 0, (0, 1024), (0, 1024), 512, 0, 0, STRIDE)),
]


def test_cachesim(tandem, case, extra, want, mode):
    name = f"cachesim {case} {' '.join(extra)} {mode}"
    so, rep, se = profile(tandem, KCA, "cachesim", mode, extra=extra, args=[case])
    try:
        got = parse_cachesim(rep)
    except (StopIteration, AttributeError) as e:
        check(f"{name}: report parses", False, f"{e!r} {rep!r}")
        return
    if case == "append":
        got_fn = {k: v[0] for k, v in got["functions"].items()}
        check(f"{name}: counts", (got["accesses"], got["loads"], got["stores"]) ==
              (want["accesses"], want["loads"], want["stores"]) and got_fn == dict([want["functions"]]) and
              sum(got["l1"]) == sum(got["l2"]) + got["l1"][0] == want["accesses"], got)
        return
    w = {k: v for k, v in want.items() if k != "l1_evictions"}
    check(f"{name}: exact", got == w, f"\n got {got}\nwant {w}")
    pol = "LRU" if "-Xcachesim.policy=lru" in extra else "FIFO"
    check(f"{name}: policy named", f"inclusive, {pol};" in rep, rep[:300])
    so, rj, se = profile(tandem, KCA, "cachesim", mode, fmt="json", extra=extra, args=[case])
    d = one_doc(f"{name} json", rj, "cachesim")
    if d:
        check(f"{name} json == text", cachesim_json(d) == got, cachesim_json(d))
        check(f"{name} json: L1 evictions", d["l1"]["evictions"] == want["l1_evictions"], d["l1"])
        check(f"{name} json: geometry", d["policy"] == pol.lower() and d["line_bytes"] == 64 and d["inclusive"] is True
              and d["l1"]["sets"] * d["l1"]["ways"] * 64 == d["l1"]["size"], d)
        check_cache_lines(name, d, CACHE_LINES.get((case, " ".join(extra))))
        jl = {(f["function"], ln["line"]): (ln["accesses"], ln["l1_misses"], ln["l2_misses"])
              for f in d["functions"] for ln in f["lines"] if ln["l1_misses"] > 0}
        if len(jl) <= 20:
            check(f"{name}: text lines == json", parse_cachesim_lines(rep) == jl, f"{parse_cachesim_lines(rep)} != {jl}")


def check_cache_lines(name, d, want):
    """Every function's lines sum to its counts; [want] (when known) the lines exactly."""
    for f in d["functions"]:
        sums = tuple(sum(ln[k] for ln in f["lines"]) for k in ("accesses", "l1_misses", "l2_misses"))
        check(f"{name} json: {f['function']}'s lines sum to its counts",
              sums == (f["accesses"], f["l1_misses"], f["l2_misses"]), f)
    if want is not None:
        got = {f["function"]: {ln["line"]: (ln["accesses"], ln["l1_misses"], ln["l2_misses"]) for ln in f["lines"]}
               for f in d["functions"]}
        check(f"{name} json: misses per line", got == want, f"\n got {got}\nwant {want}")


# ----------------------------------------------------------------------------------------
# formats: json == text (pathprof too), several analyses in one file, callgrind
# ----------------------------------------------------------------------------------------
ALL = ["methodcount", "callgraph", "calltree", "pathprof", "cachesim"]


def test_pathprof_formats(tandem, prog, mode):
    name = f"pathprof {prog} {mode}"
    so, rep, se = profile(tandem, prog, "pathprof", mode)
    so, rj, se = profile(tandem, prog, "pathprof", mode, fmt="json")
    d = one_doc(f"{name} json", rj, "pathprof")
    try:
        paths, total, distinct = parse_pathprof(rep)
    except AttributeError as e:
        check(f"{name}: report parses", False, f"{e!r} {rep!r}")
        return
    if d:
        jp = {(p["function"], p["path"]): (p["count"], p["start"], p["end"], p["blocks"], p["lines"]) for p in d["paths"]}
        check(f"{name}: json == text", jp == paths and d["total_paths"] == total and len(jp) == distinct,
              f"\n json {jp}\n text {paths}")
        check(f"{name}: counts sum to the total", sum(v[0] for v in paths.values()) == total, total)


def test_one_file(tandem, prog, mode):
    """All five analyses in one json file: the documents, in order, equal those of five
    separate runs."""
    so, rep, se = profile(tandem, prog, ",".join(ALL), mode, fmt="json")
    try:
        docs = json_docs(rep)
    except ValueError as e:
        check(f"one file {prog} {mode}: parses", False, f"{e} {rep[:500]!r}")
        return
    check(f"one file {prog} {mode}: five documents in order", [d.get("analysis") for d in docs] == ALL, docs)
    for an, d in zip(ALL, docs):
        so, r1, se = profile(tandem, prog, an, mode, fmt="json")
        check(f"one file {prog} {mode}: {an} == its own run", json_docs(r1) == [d], f"\n{r1[:1500]}\n{d}")


def test_callgrind(tandem, prog, analysis, mode, want_self, want_edges):
    """callgrind output of methodcount / callgraph: parsed here (self cost of a function =
    its calls; calls= lines = edges) and by callgrind_annotate (its function table, and the
    "=> callee (Nx)" lines under the callers that have a source line)."""
    name = f"callgrind {prog} {analysis} {mode}"
    so, rep, se = profile(tandem, prog, analysis, mode, fmt="callgrind")
    check(f"{name}: header", rep.startswith("# callgrind format\n") and "events: Calls\n" in rep, rep[:200])
    selfc, calls, summary, totals = parse_callgrind(rep)
    total = sum(want_self.values())
    check(f"{name}: self costs", {k: v for k, v in selfc.items() if v} == want_self, f"\n got {selfc}\nwant {want_self}")
    check(f"{name}: summary and totals", summary == total and totals == total, (summary, totals, total))
    check(f"{name}: calls", calls == want_edges, f"\n got {calls}\nwant {want_edges}")
    d = tempfile.mkdtemp(prefix="tandem_known_cg_")
    try:
        path = os.path.join(d, "callgrind.out")
        with open(path, "w") as f:
            f.write(rep)
        table, arrows, out = callgrind_annotate(path, HERE)
        if not check(f"{name}: callgrind_annotate runs", table is not None, out):
            return
        want_table = {f"{prog}:{k}": v for k, v in want_self.items()}
        got_table = {k: v for k, v in table.items() if k != "PROGRAM TOTALS" and v}
        check(f"{name}: callgrind_annotate function table", got_table == want_table,
              f"\n got {got_table}\nwant {want_table}\n{out[:3000]}")
        check(f"{name}: callgrind_annotate total", table.get("PROGRAM TOTALS") == total, table)
        # "=>" lines: the callers with a source line > 0 (not the main chunk, not [root])
        want_arrows = sorted((f"{prog}:{callee}", c) for (caller, callee), c in want_edges.items()
                             if re.search(r":\d+\)$", caller))
        check(f"{name}: callgrind_annotate calls", sorted(arrows) == want_arrows,
              f"\n got {sorted(arrows)}\nwant {want_arrows}\n{out[:3000]}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------
# sampling
# ----------------------------------------------------------------------------------------
SAMPLED = ["methodcount", "callgraph", "calltree", "pathprof"]


def test_sampling_equal(tandem, prog, cwd=HERE):
    """-Xsample.rate=100% (a ring that holds the whole run: the analyzer cannot fall behind)
    gives exactly the exhaustive profile, for each analysis in its own run and all four in
    one run."""
    name = f"sampling 100% {os.path.basename(prog)}"
    ex = {}
    for an in SAMPLED:
        so, rep, se = profile(tandem, prog, an, "concurrent", fmt="json", cwd=cwd)
        ex[an] = rep
    for an in SAMPLED:
        so, rep, se = profile(tandem, prog, an, "concurrent", fmt="json", cwd=cwd,
                              extra=["-Xcab.mode=sampling", "-Xsample.rate=100%", *BIG_RING])
        check(f"{name} {an}: == exhaustive", rep == ex[an] and rep, f"\n{rep[:1500]}\n--- vs ---\n{ex[an][:1500]}")
        t = th.parse_stats(se).total
        check(f"{name} {an}: nothing dropped", th.nothing_lost(t), t["line"] if t else se[-1000:])
    so, rep, se = profile(tandem, prog, ",".join(SAMPLED), "concurrent", fmt="json", cwd=cwd,
                          extra=["-Xcab.mode=sampling", "-Xsample.rate=1", *BIG_RING])
    try:
        docs = json_docs(rep)
    except ValueError as e:
        check(f"{name} all four in one run: parses", False, f"{e} {rep[:500]!r}")
        return
    check(f"{name} all four in one run: four documents", [d.get("analysis") for d in docs] == SAMPLED, rep[:500])
    for an, d in zip(SAMPLED, docs):
        check(f"{name} all four in one run: {an} == exhaustive", json_docs(ex[an]) == [d], f"\n{d}\n--- vs ---\n{ex[an][:1500]}")


def test_sampling_estimates(tandem):
    """At a rate below 1 every report says its counts are estimates (text) or marks them
    estimated with the rate (json)."""
    # The rate a report scales by is at most the sampling rate (an analysis may scale by
    # less: callgraph leaves out the calls whose site a burst cut off, and says so by its
    # rate); the text, json and callgrind outputs of one run agree on it.
    extra = ["-Xcab.mode=sampling", "-Xsample.rate=50%", *BIG_RING]
    for an in SAMPLED:
        name = f"sampling 50% shape.lua {an}"
        so, rep, se = profile(tandem, "shape.lua", an, "concurrent", extra=extra,
                              fmt="callgrind" if an == "callgraph" else "text")
        m = re.search(r"estimates from sampling at rate ([\d.e-]+)", rep)
        if not check(f"{name}: says estimates", m is not None and 0 < float(m.group(1)) <= 0.5, rep[:500]):
            continue
        so, rj, se = profile(tandem, "shape.lua", an, "concurrent", fmt="json", extra=extra)
        d = one_doc(f"{name} json", rj, an)
        if d:
            check(f"{name} json: estimated", d["estimated"] is True and 0 < d["sample_rate"] <= 0.5, d)
    so, rep, se = profile(tandem, "shape.lua", "callgraph", "concurrent", extra=extra)
    check("sampling 50% shape.lua callgraph text: says estimates", "estimates from sampling at rate" in rep, rep[:500])


# ----------------------------------------------------------------------------------------
# threads
# ----------------------------------------------------------------------------------------
THREAD_MODELS = {
    "native": ["-Xthreads=native"],
    "green1": ["-Xthreads=green", "-Xcarriers=1"],
    "green2": ["-Xthreads=green", "-Xcarriers=2"],
}
KTH = "known_threads.lua"


def threads_expected():
    """known_threads.lua: thread k+1 (k = 1, 2, 3; spawned in order by the main thread, id 1)
    runs work(1000k): work once, mid 1000k times, leaf 10 times per mid. The whole reports
    (methodcount, calltree, pathprof) are equal sequential and concurrent."""
    M, L, Mi, W = n(KTH, "main"), n(KTH, "leaf"), n(KTH, "mid"), n(KTH, "work")
    trees = {1: {(M,): 1}}
    for k in (1, 2, 3):
        trees[k + 1] = {(W,): 1, (W, Mi): 1000 * k, (W, Mi, L): 10000 * k}
    mc = {M: 1, W: 3, Mi: 6000, L: 60000}
    pats = {(L, ()): 60000, (Mi, (L,)): 6000, (W, (Mi,)): 3, (M, ()): 1}
    return trees, mc, pats


def test_known_threads(tandem, model):
    trees, mc, pats = threads_expected()
    res = {}
    for mode in ("sequential", "concurrent"):
        name = f"threads {KTH} {model} {mode}"
        so, rep, se = profile(tandem, KTH, "methodcount,calltree,pathprof", mode, fmt="json",
                              extra=THREAD_MODELS[model])
        check(f"{name}: output", so == "6000\n", so)
        try:
            docs = json_docs(rep)
            got_mc = {f["function"]: f["calls"] for f in docs[0]["functions"]}
            got_trees, got_pats = calltree_json(docs[1])
            # leaf has one block: one path, entry to return, once per call
            leaf = [(p["path"], p["count"], p["start"], p["end"], p["blocks"]) for p in docs[2]["paths"]
                    if p["function"] == n(KTH, "leaf")]
        except (ValueError, IndexError, KeyError) as e:
            check(f"{name}: report parses", False, f"{e!r} {rep[:1000]!r}")
            continue
        check(f"{name}: methodcount", got_mc == mc, got_mc)
        check(f"{name}: per-thread call trees", got_trees == trees, f"\n got {got_trees}\nwant {trees}")
        check(f"{name}: patterns", got_pats == pats, got_pats)
        check(f"{name}: leaf's path", leaf == [(0, 60000, "entry", "return", [0])], leaf)
        so, rf, se = profile(tandem, KTH, "calltree", mode, fmt="folded", extra=THREAD_MODELS[model])
        try:
            check(f"{name}: folded", parse_folded(rf) == trees, rf[:1000])
        except (ValueError, AssertionError) as e:
            check(f"{name}: folded parses", False, f"{e!r} {rf[:500]!r}")
        res[mode] = rep
    if len(res) == 2:
        check(f"threads {KTH} {model}: concurrent == sequential", res["concurrent"] == res["sequential"],
              f"\n{res['concurrent'][:1500]}\n--- vs ---\n{res['sequential'][:1500]}")


def canonical_threads(doc):
    """A calltree document's per-thread trees without the thread ids (which depend on
    scheduling when threads spawn threads): the sorted list of each thread's contexts."""
    trees, pats = calltree_json(doc)
    return sorted(sorted(t.items()) for t in trees.values()), pats


def test_threads_program(tandem, prog, model):
    res = {}
    for mode in ("sequential", "concurrent"):
        name = f"threads {prog} {model} {mode}"
        so, rep, se = profile(tandem, prog, "methodcount,calltree", mode, fmt="json", cwd=THREADS,
                              extra=THREAD_MODELS[model])
        try:
            docs = json_docs(rep)
            mc = {f["function"]: f["calls"] for f in docs[0]["functions"]}
            res[mode] = (mc, docs[0]["total_calls"], *canonical_threads(docs[1]), docs[1]["total_calls"])
        except (ValueError, IndexError, KeyError) as e:
            check(f"{name}: report parses", False, f"{e!r} {rep[:1000]!r}")
    if len(res) == 2:
        s, c = res["sequential"], res["concurrent"]
        check(f"threads {prog} {model}: methodcount concurrent == sequential", s[:2] == c[:2], f"{c[:2]} vs {s[:2]}")
        check(f"threads {prog} {model}: per-thread call trees concurrent == sequential", s[2] == c[2],
              f"\n{c[2]}\n--- vs ---\n{s[2]}")
        check(f"threads {prog} {model}: patterns concurrent == sequential", s[3:] == c[3:], f"{c[3:]} vs {s[3:]}")
        check(f"threads {prog} {model}: the trees sum to the calls", s[1] > 0 and s[4] == s[1] ==
              sum(n for t in s[2] for _, n in t), (s[1], s[4]))


# ----------------------------------------------------------------------------------------
# failing programs
# ----------------------------------------------------------------------------------------
KF = "known_fails.lua"


def test_fails(tandem, mode):
    M, F, G, H = n(KF, "main"), n(KF, "f"), n(KF, "g"), n(KF, "h")
    gcalls = bytecode_calls(tandem, KF, "g")
    hcalls = bytecode_calls(tandem, KF, "h")
    mcalls = bytecode_calls(tandem, KF, "main")
    want = {
        "methodcount": {M: 1, H: 1, G: 3, F: 6},
        "callgraph": {("[root]", M): (1, {"C": 1}), (M, H): (1, {mcalls[0]: 1}), (H, G): (3, {hcalls[0]: 3}),
                      (G, F): (6, {gcalls[0]: 6})},
        # the frames open when the error unwinds them (main, h, g) are closed at the end
        "calltree": ({(M,): 1, (M, H): 1, (M, H, G): 3, (M, H, G, F): 6},
                     {(F, ()): 6, (G, (F,)): 3, (H, (G,)): 1, (M, (H,)): 1}),
    }
    for an in ALL:
        name = f"fails {an} {mode}"
        so, rep, se = profile(tandem, KF, an, mode, fmt="json", expect_code=1)
        check(f"{name}: the error", "boom" in se, se[-500:])
        d = one_doc(name, rep, an)
        if d is None:
            continue
        if an == "methodcount":
            got = {f["function"]: f["calls"] for f in d["functions"]}
            check(f"{name}: whole", got == want[an], got)
        elif an == "callgraph":
            check(f"{name}: whole", callgraph_json(d) == want[an], callgraph_json(d))
        elif an == "calltree":
            t, p = calltree_json(d)
            check(f"{name}: whole", list(t.values()) == [want[an][0]] and p == want[an][1], (t, p))
        elif an == "pathprof":
            check(f"{name}: written", d["total_paths"] > 0, d)
        elif an == "cachesim":
            check(f"{name}: written", "accesses" in d, d)
        # A run that ended at an uncaught error did not run to its end: partial.
        check(f"{name}: marked partial", d["partial"] is True, d["partial"])
    for an in ("methodcount", "callgraph", "calltree"):
        so, rep, se = profile(tandem, KF, an, mode, expect_code=1)
        check(f"fails {an} {mode} text: marked partial", "partial" in rep, rep.split("\n")[0])


def test_sigterm(tandem, mode):
    """known_forever.lua killed by SIGTERM once it runs: the profile (three analyses, json) is
    written whole, marked partial, and consistent (g calls f 100 times per call)."""
    d = tempfile.mkdtemp(prefix="tandem_known_term_")
    out = os.path.join(d, "profile.out")
    name = f"SIGTERM {mode}"
    try:
        line, code = th.signal_when_ready(th.tandem_argv(tandem, "-Xprofile=methodcount,callgraph,calltree",
                                                         "-Xprofile.format=json", f"-Xprofile.out={out}",
                                                         *mode_opts(mode), "known_forever.lua"),
                                          signal.SIGTERM, cwd=HERE)
        if code is None:
            check(f"{name}: ends", False, "still running 60 s after SIGTERM")
            return
        check(f"{name}: started", line == b"ready\n", line)
        check(f"{name}: killed by the signal", code in (-signal.SIGTERM, 128 + signal.SIGTERM), code)
        check(f"{name}: no temporary file left", os.listdir(d) == ["profile.out"], os.listdir(d))
        if not os.path.exists(out):
            check(f"{name}: profile written", False, os.listdir(d))
            return
        try:
            docs = json_docs(open(out).read())
        except ValueError as e:
            check(f"{name}: json parses", False, repr(e))
            return
        check(f"{name}: three documents", [x.get("analysis") for x in docs] == ["methodcount", "callgraph", "calltree"],
              docs)
        check(f"{name}: marked partial", all(x.get("partial") is True for x in docs), [x.get("partial") for x in docs])
        if len(docs) == 3:
            Fn, Gn = n("known_forever.lua", "f"), n("known_forever.lua", "g")
            mc = {f["function"]: f["calls"] for f in docs[0]["functions"]}
            cg = callgraph_json(docs[1])
            nf, ng = mc.get(Fn, 0), mc.get(Gn, 0)
            check(f"{name}: consistent counts", ng > 0 and 100 * (ng - 1) <= nf <= 100 * ng and
                  cg.get((Gn, Fn), (0,))[0] == nf and docs[2]["total_calls"] == docs[0]["total_calls"], (mc, cg))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    tandem = th.find_tandem(a.tandem, required=True)

    tasks = []
    for mode in MODES:
        tasks.append(lambda mode=mode: test_methodcount(tandem, mode))
        tasks.append(lambda mode=mode: test_callgraph(tandem, KG, mode, graph_expected(tandem), 30))
        tasks.append(lambda mode=mode: test_callgraph(tandem, KT, mode, tree_edges(tandem), 36))
        tasks.append(lambda mode=mode: test_calltree(tandem, KT, mode, tree_expected()))
        tasks.append(lambda mode=mode: test_calltree(tandem, KG, mode, graph_tree_expected()))
        tasks.append(lambda mode=mode: test_stale(tandem, mode))
        tasks.append(lambda mode=mode: test_pathprof_formats(tandem, KT, mode))
    for mode in ("sequential", "concurrent"):
        for case, extra, want in CACHE_CASES:
            tasks.append(lambda c=case, e=extra, w=want, m=mode: test_cachesim(tandem, c, e, w, m))
        tasks.append(lambda mode=mode: test_fails(tandem, mode))
        tasks.append(lambda mode=mode: test_sigterm(tandem, mode))
    tasks.append(lambda: test_one_file(tandem, KC, "concurrent"))
    tasks.append(lambda: test_pathprof_formats(tandem, KC, "small"))

    # callgrind: methodcount's self costs are the calls; the call graph's add its edges.
    def callgrind_tasks():
        mc_self = dict(METHODCOUNT)
        test_callgrind(tandem, KC, "methodcount", "concurrent", mc_self, {})
        edges = tree_edges(tandem)
        if edges:
            tree_self = collections.Counter()
            for (caller, callee), (c, _) in edges.items():
                tree_self[callee] += c
            test_callgrind(tandem, KT, "callgraph", "sequential", dict(tree_self),
                           {k: v[0] for k, v in edges.items()})
    tasks.append(callgrind_tasks)
    for prog in (KC, KT, KG):
        tasks.append(lambda p=prog: test_sampling_equal(tandem, p))
    tasks.append(lambda: test_sampling_equal(tandem, "shape.lua"))
    tasks.append(lambda: test_sampling_estimates(tandem))
    for model in THREAD_MODELS:
        tasks.append(lambda m=model: test_known_threads(tandem, m))
        for prog in ("spawn_tree.lua", "pingpong.lua"):
            tasks.append(lambda p=prog, m=model: test_threads_program(tandem, p, m))

    def guarded(t):
        try:
            t()
        except Exception as e:  # a crash in one group is a failure, not the end of the run
            import traceback
            check("test code", False, f"{e!r}\n{traceback.format_exc()}")

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        list(ex.map(guarded, tasks))

    n = check.counts
    return check.finish(f"{n['checks']} checks in {n['runs']} profiled runs ({n['stats']} concurrent runs with "
                        f"produced == consumed)")


if __name__ == "__main__":
    sys.exit(main())
