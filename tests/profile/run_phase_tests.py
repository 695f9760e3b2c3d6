#!/usr/bin/env python3
"""The profile library (require "profile": profile.start/stop/snapshot/write/reset,
vm/lib/vm_lib_profile.c, vm/prof/vm_prof_phase.h) around a phase of known shape.

  exact      phase_known.lua: the same functions run before, between and after two phases
             with other counts; the counts written are exactly the phases' (methodcount per
             function, callgraph edges, calltree contexts per thread, computed here from the
             program's shape), under the JIT and the interpreter (-Xjit=off), native threads
             and green threads on one and two carriers, with no thread and with three
             threads spawned inside the phase. The program itself checks profile.snapshot()
             (in the middle of the phase and after it) and the library's errors (second
             start, stop before start, refused analyses, bad format, unwritable file).
  formats    every format profile.write has for those analyses, parsed back and compared
             with the JSON report of the same write: text, folded, callgrind, pprof (decoded
             by protoc-generated Python, as run_pprof_tests.py does), html (its embedded
             data; one page opened in headless Chromium, as run_html_tests.py does, when
             chromium is installed), annotate (pathprof, against the JSON paths' lines).
  same       the JIT and the interpreter write the same JSON; so do every thread model
             (methodcount and callgraph).
  refused    the library in a run profiled from the command line (-Xprofile) fails with a
             message naming -Xprofile.

  PYTHONPATH=pylib python3 tests/profile/run_phase_tests.py --tandem build/tandem
"""
import argparse
import collections
import os
import re
import sys
import tempfile

import tandem_harness as th
from tandem_harness import json_docs

import run_known_profiles as known
import run_pprof_tests as pp
import run_html_tests as hp

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = "phase_known.lua"
MODELS = {
    "native": ["-Xthreads=native"],
    "green1": ["-Xthreads=green", "-Xcarriers=1"],
    "green2": ["-Xthreads=green", "-Xcarriers=2"],
}
FORMATS = ("text", "json", "folded", "callgrind", "annotate", "pprof", "html")

check = th.Checks()
known.check = pp.check = hp.check = check  # the helpers' checks count here


def run(tandem, args, timeout=300):
    r = th.run_once(th.tandem_argv(tandem, *args), cwd=HERE, timeout=timeout)
    return r.code, r.out, r.err


def short(name):
    """'work (phase_known.lua:19)' -> 'work'; '[root]', '[C]' as they are."""
    return name.split(" (")[0]


def expected(nthreads):
    """(methodcount, callgraph edges, {thread tree}) of phase_known.lua by construction, with
    functions by short name. The spawned threads' trees are returned as a sorted list (their
    ids depend on the thread model)."""
    work = 1 + nthreads
    mid = 5 + sum(10 * k for k in range(1, nthreads + 1))
    mc = {"phase": 1, "work": work, "mid": mid, "leaf": 3 * mid + 1, "rec": 5 * work, "expect": 5, "by_prefix": 3}
    edges = {("main chunk", "phase"): 1, ("phase", "work"): 1, ("work", "mid"): mid, ("mid", "leaf"): 3 * mid,
             ("work", "rec"): work, ("rec", "rec"): 4 * work, ("main chunk", "expect"): 2,
             ("phase", "by_prefix"): 3, ("phase", "expect"): 3, ("main chunk", "leaf"): 1}
    if nthreads:
        edges[("[root]", "work")] = nthreads

    def work_tree(prefix, k):
        t = {prefix + ("work",): 1, prefix + ("work", "mid"): k, prefix + ("work", "mid", "leaf"): 3 * k}
        for d in range(1, 6):
            t[prefix + ("work",) + ("rec",) * d] = 1
        return t

    main = work_tree(("main chunk", "phase"), 5)
    main.update({("main chunk", "phase"): 1, ("main chunk", "expect"): 2, ("main chunk", "leaf"): 1,
                 ("main chunk", "phase", "by_prefix"): 3, ("main chunk", "phase", "expect"): 3})
    spawned = sorted(sorted(work_tree((), 10 * k).items()) for k in range(1, nthreads + 1))
    return mc, edges, main, spawned


def shorten_tree(tree):
    return {tuple(short(f) for f in ctx): n for ctx, n in tree.items() if n}


def check_exact(name, docs, nthreads):
    by = {d["analysis"]: d for d in docs}
    mc, edges, main, spawned = expected(nthreads)
    got = {short(f["function"]): f["calls"] for f in by["methodcount"]["functions"]}
    check(f"{name}: methodcount == the phases'", got == mc, f"{got} != {mc}")
    got = collections.Counter()
    for e in by["callgraph"]["edges"]:
        got[(short(e["caller"]), short(e["callee"]))] += e["calls"]
    check(f"{name}: callgraph edges == the phases'", dict(got) == edges,
          f"only got {set(got.items()) - set(edges.items())} only want {set(edges.items()) - set(got.items())}")
    trees, _ = known.calltree_json(by["calltree"])
    check(f"{name}: calltree threads", len(trees) == 1 + nthreads, sorted(trees))
    t1 = shorten_tree(trees.get(1, {}))
    check(f"{name}: calltree main thread == the phases'", t1 == main,
          f"only got {set(t1.items()) - set(main.items())} only want {set(main.items()) - set(t1.items())}")
    others = sorted(sorted(shorten_tree(t).items()) for tid, t in trees.items() if tid != 1)
    check(f"{name}: calltree spawned threads == the phases'", others == spawned, others)
    total = sum(mc.values())
    for a in ("methodcount", "callgraph", "calltree"):
        check(f"{name}: {a} total", by[a]["total_calls"] == total, by[a]["total_calls"])
        check(f"{name}: {a} not an estimate", by[a]["sample_rate"] == 1 and not by[a]["estimated"], by[a])


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def check_formats(name, d, docs, Profile):
    by = {x["analysis"]: x for x in docs}
    # text: methodcount's table and callgraph's edges
    text = read(os.path.join(d, "phase.text"))
    rows = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+[\d.]+%\s+(\S.*\))$", text, re.M)
            if " -> " not in m.group(2)}
    want = {f["function"]: f["calls"] for f in by["methodcount"]["functions"]}
    check(f"{name}: text methodcount == json", {k: v for k, v in rows.items() if k in want} == want, rows)
    edges = {}
    for m in re.finditer(r"^\s+(\d+)\s+[\d.]+%\s+(.*\)) -> (.*\))\s+\[", text, re.M):
        edges[(m.group(2), m.group(3))] = int(m.group(1))
    wedges = {(e["caller"], e["callee"]): e["calls"] for e in by["callgraph"]["edges"] if e["caller"] != "[root]"}
    check(f"{name}: text callgraph == json", edges == wedges, f"{edges} != {wedges}")
    # folded: the calltree's contexts
    folded = known.parse_folded(read(os.path.join(d, "phase.folded")))
    trees, _ = known.calltree_json(by["calltree"])
    want = {t: {c: n for c, n in tree.items() if n} for t, tree in trees.items()}
    if None in folded:  # one thread: no "thread N" frame
        folded = {next(iter(want)): folded[None]}
    check(f"{name}: folded == json calltree", folded == want, f"{folded} != {want}")
    # callgrind: one document per analysis that has the format (methodcount: self counts;
    # callgraph: calls= lines per edge)
    cg = read(os.path.join(d, "phase.callgrind"))
    parts = ["# callgrind format" + x for x in cg.split("# callgrind format")[1:]]
    check(f"{name}: callgrind documents", len(parts) == 2, len(parts))
    if len(parts) == 2:
        selfc, _, summary, _ = known.parse_callgrind(parts[0])
        mcs = {f["function"]: f["calls"] for f in by["methodcount"]["functions"]}
        check(f"{name}: callgrind self == json methodcount", {k: v for k, v in selfc.items() if v} == mcs, selfc)
        check(f"{name}: callgrind summary", summary == by["methodcount"]["total_calls"], summary)
        _, calls, _, _ = known.parse_callgrind(parts[1])
        want = collections.Counter()
        for e in by["callgraph"]["edges"]:
            want[(e["caller"], e["callee"])] += e["calls"]
        check(f"{name}: callgrind calls == json callgraph", calls == dict(want), f"{calls} != {dict(want)}")
    # pprof
    if Profile is not None:
        p = pp.decode(Profile, read(os.path.join(d, "phase.pprof"), "rb"), name)
        if p is not None:
            types = pp.well_formed(p, name)
            pp.compare(name + " pprof", p, types, docs, False)
    # html: its data are the same documents
    data = hp.page_data(read(os.path.join(d, "phase.html")))
    check(f"{name}: html has its data", data is not None)
    if data is not None:
        check(f"{name}: html analyses == json", data["analyses"] == docs,
              [x.get("analysis") for x in data["analyses"]])
        check(f"{name}: html says phase", data["run"]["sampling"] == "phase", data["run"])
    html = read(os.path.join(d, "phase.html"))
    check(f"{name}: html self-contained", re.search(r"(src|href)=\"(https?:)?//", html) is None)


def check_browser(name, path, docs):
    """The library's page in headless Chromium, as run_html_tests.py opens -Xprofile's: the
    viewer finished, no error or console message, every function name and the methodcount
    table rendered."""
    chromium = hp.find_chromium()
    if chromium is None:
        print("run_phase_tests: chromium not found, the page is not opened (scripts/setup.sh installs it)")
        return
    dom, err = hp.browser(chromium, path, ["--dump-dom"])
    check(f"{name}: viewer ready", re.search(r'<html lang="en" data-viewer="ready"', dom) is not None, dom[:300] + err[-800:])
    check(f"{name}: no viewer error", 'id="viewer-error"' not in dom)
    console = [l for l in err.splitlines() if "Uncaught" in l or ":CONSOLE" in l]
    check(f"{name}: no console message", not console, console[:5])
    by = {d["analysis"]: d for d in docs}
    text = hp.visible(dom)
    names = {f["function"] for f in by["methodcount"]["functions"]}
    check(f"{name}: every function name rendered", not [n for n in names if n not in text])
    want = {f["function"]: f["calls"] for f in by["methodcount"]["functions"]}
    rows = {k: round(v) for k, v in hp.table_counts(hp.section(dom, "methodcount")).items()}
    check(f"{name}: the page's calls per function == methodcount", rows == want, f"{rows} != {want}")


def one(tandem, tmp, jit, model, nthreads, Profile):
    name = f"jit={jit} {model} threads={nthreads}"
    d = tempfile.mkdtemp(prefix="phase_", dir=tmp)
    code, out, err = run(tandem, ["-Xjit=" + jit, *MODELS[model], PROG, d, str(nthreads)])
    if not check(f"{name}: exit 0 and ok", code == 0 and out.strip() == "ok", f"{code} {out[-300:]} {err[-800:]}"):
        return None
    docs = json_docs(read(os.path.join(d, "phase.json")))
    check(f"{name}: three json documents", [x["analysis"] for x in docs] == ["methodcount", "callgraph", "calltree"])
    check_exact(name, docs, nthreads)
    check_formats(name, d, docs, Profile)
    if jit == "on" and model == "green2" and nthreads == 3:
        check_browser(name + " html", os.path.join(d, "phase.html"), docs)
    return docs


def pathprof_annotate(tandem, tmp, jit, model):
    """pathprof (and cachesim) through the library: annotate == the JSON paths' lines."""
    name = f"pathprof jit={jit} {model}"
    d = tempfile.mkdtemp(prefix="phase_pp_", dir=tmp)
    code, out, err = run(tandem, ["-Xjit=" + jit, *MODELS[model], PROG, d, "2", "pathprof,cachesim"])
    if not check(f"{name}: exit 0 and ok", code == 0 and out.strip() == "ok", f"{code} {out[-300:]} {err[-800:]}"):
        return
    docs = json_docs(read(os.path.join(d, "phase.json")))
    by = {x["analysis"]: x for x in docs}
    want = collections.Counter()
    for q in by["pathprof"]["paths"]:
        for ln in q["lines"]:
            if ln:
                want[(q["function"], ln)] += q["count"]
    got = hp.annotate_counts(read(os.path.join(d, "phase.annotate")))
    check(f"{name}: annotate == json paths' lines", got == dict(want) and len(want) > 0,
          f"{sorted(got.items())[:5]} != {sorted(want.items())[:5]}")
    # leaf's one path runs once per call: 3 per mid, mid 5 + 10 + 20 times, + leaf(0)
    leaf = [q for q in by["pathprof"]["paths"] if q["function"].startswith("leaf ")]
    check(f"{name}: leaf's path count", sum(q["count"] for q in leaf) == 3 * 35 + 1, leaf)
    check(f"{name}: cachesim saw the phase's accesses", by["cachesim"]["accesses"] > 0, by["cachesim"])


def main():
    pp.reexec_with_debian_python()
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    args = ap.parse_args()
    tandem = os.path.abspath(args.tandem)
    with tempfile.TemporaryDirectory(prefix="tandem_phase_") as tmp:
        Profile, why = pp.load_decoder(tmp)
        if Profile is None:
            print("run_phase_tests: pprof not decoded: " + why)
        seen = {}
        for jit in ("on", "off"):
            for model in MODELS:
                for nthreads in (0, 3):
                    docs = one(tandem, tmp, jit, model, nthreads, Profile)
                    if docs is not None:
                        seen[(jit, model, nthreads)] = docs
        for (jit, model, n), docs in seen.items():
            other = seen.get(("off", model, n))
            if jit == "on" and other is not None:
                # Green threads moving between two carriers: which carrier's stream sees an
                # invocation's later calls is a matter of timing, so its depth-two pattern is
                # not deterministic there (a frame replayed on the new carrier does not count
                # one; -Xprofile's calltree behaves the same). The contexts and counts are.
                strip = model == "green2"
                a = [{k: v for k, v in d.items() if not (strip and k == "patterns")} for d in docs]
                b = [{k: v for k, v in d.items() if not (strip and k == "patterns")} for d in other]
                check(f"{model} threads={n}: JIT == interpreter (json)", a == b)
            base = seen.get((jit, "native", n))
            if base is not None:
                check(f"jit={jit} {model} threads={n}: methodcount, callgraph == native's", docs[:2] == base[:2])
        for jit in ("on", "off"):
            pathprof_annotate(tandem, tmp, jit, "native")
        pathprof_annotate(tandem, tmp, "on", "green2")
        prog = os.path.join(tmp, "cmdline.lua")
        with open(prog, "w") as f:
            f.write('local profile = require "profile"\nprofile.start{"methodcount"}\nprint("not refused")\n')
        code, out, err = run(tandem, ["-Xprofile=methodcount", "-Xprofile.out=" + os.path.join(tmp, "c.txt"), prog])
        check("with -Xprofile: refused", code == 1 and "not refused" not in out and
              "profile.start: this run is already profiled from the command line (-Xprofile)" in err, err[-500:])
    return check.finish(f"run_phase_tests, {check.counts['checks']} checks")


if __name__ == "__main__":
    sys.exit(main())
