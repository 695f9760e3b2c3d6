#!/usr/bin/env python3
"""-Xtrace=FILE: the timeline parsed back and checked against its invariants.

Every file: valid JSON in Chrome's trace-event object form ({"traceEvents": [...]}); every
event is "X" (with ts and dur >= 0) or "M"; any "B" has its "E" on the same thread (the
recorder writes none, so any would be a bug); every track with spans is named; the spans of
one track nest or are disjoint (times compared in integer nanoseconds). Per run, what the
run must show:

  collections   trace_work.lua (it allocates and calls collectgarbage): "collection" spans
                under native threads (multi-threaded: inside "safepoint" pauses with
                time_to_stop_us) and under green threads; a one-threaded program's Boehm-
                triggered collections too
  green         -Xthreads=green (1 and 2 carriers): "thread N" runs of at least two language
                threads on carrier tracks, "carrier N" tracks
  ring full     -Xprofile=methodcount on the smallest ring with a slowed analyzer
                (-Xcab.size=12k -Xcab.chunk=4k -Xtest.analyzer_delay=200): "ring full" spans
  analyzer      concurrent profiling: an "analyzer 0" track with "analyzing" (and "idle")
                spans, sequential: none
  bounded       12000 green switches on one carrier: its track keeps the newest ring's worth
                of spans (8192), the rest counted as overwritten
  SIGINT        trace_work.lua forever, SIGINT after "ready" (with and without a profile):
                the process dies of the signal and the file is whole and valid
  other ends    an uncaught error (exit 1) and os.exit in a thread (its status): the file
                is written, native and green
  errors        -Xtrace into a missing directory: an error naming the file, exit 1, before
                the program runs; no -Xtrace: no file

  PYTHONPATH=pylib python3 tests/trace/run_trace_tests.py --tandem build/tandem
"""
import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "trace_work.lua")
SMALL = ["-Xcab.size=12k", "-Xcab.chunk=4k", "-Xtest.analyzer_delay=200"]

check = th.Checks()


def ns(us):
    """A time in the file (microseconds, three decimals) in integer nanoseconds."""
    return round(float(us) * 1000)


def validate(name, path):
    """Parses [path] and checks the invariants every trace has; returns the events, or None."""
    if not check(f"{name}: file written", os.path.exists(path)):
        return None
    try:
        with open(path) as f:
            doc = json.load(f)
    except ValueError as e:
        check(f"{name}: valid JSON", False, str(e))
        return None
    ev = doc.get("traceEvents")
    if not check(f"{name}: traceEvents", isinstance(ev, list), str(doc)[:200]):
        return None
    check(f"{name}: otherData counts", all(k in doc.get("otherData", {}) for k in
                                          ("records_per_thread", "overwritten_records", "lost_records")))
    names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = collections.defaultdict(list)
    open_b = collections.defaultdict(list)
    for e in ev:
        ph = e.get("ph")
        check(f"{name}: phase X, M (or B/E)", ph in ("X", "M", "B", "E"), e)
        if ph == "B":
            open_b[e["tid"]].append(e)
        elif ph == "E":
            check(f"{name}: E closes a B of its thread", open_b[e["tid"]] and open_b[e["tid"]].pop() is not None, e)
        elif ph == "X":
            ok = all(k in e for k in ("ts", "dur", "pid", "tid", "name", "cat")) and e["dur"] >= 0 and e["ts"] >= 0
            if check(f"{name}: X event fields", ok, e):
                spans[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
    check(f"{name}: every B has its E", not any(open_b.values()), {k: len(v) for k, v in open_b.items() if v})
    for tid, v in spans.items():
        check(f"{name}: track {tid} named", tid in names, names)
        # Sorted by start, the longer first: a span starting with its parent comes after it.
        v.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s in v:
            while stack and stack[-1][1] <= s[0]:
                stack.pop()
            if stack and not check(f"{name}: spans of track {names.get(tid)} nest or are disjoint",
                                   s[1] <= stack[-1][1], f"{s} crosses {stack[-1]}"):
                break
            stack.append(s)
    return ev


def x_named(ev, what):
    return [e for e in ev if e.get("ph") == "X" and e["name"] == what]


def tracks(ev):
    return {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}


def run_traced(tandem, tmp, name, args, expect_code=0):
    path = os.path.join(tmp, name.replace(" ", "_").replace("/", "_") + ".json")
    r = th.run_once(th.tandem_argv(tandem, "-Xtrace=" + path, *args), cwd=HERE, timeout=300)
    check(f"{name}: exit {expect_code}", r.code == expect_code, r.err[-800:])
    return validate(name, path)


def test_collections(tandem, tmp):
    for threads in (["-Xthreads=native"], ["-Xthreads=green"]):
        name = f"collections {threads[0]}"
        ev = run_traced(tandem, tmp, name, threads + [WORK])
        if ev is None:
            continue
        gcs = x_named(ev, "collection")
        check(f"{name}: collections", len(gcs) >= 4, len(gcs))
        check(f"{name}: heap_used_bytes", all(e["args"]["heap_used_bytes"] > 0 for e in gcs))
        sps = x_named(ev, "safepoint")
        check(f"{name}: safepoint pauses", len(sps) >= 4, len(sps))
        check(f"{name}: time to stop within the pause",
              all(0 <= ns(e["args"]["time_to_stop_us"]) <= ns(e["dur"]) for e in sps))
        # Each collection inside a pause of its own track (they ran at safepoints).
        by_tid = collections.defaultdict(list)
        for e in sps:
            by_tid[e["tid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
        # Each collection after the first pause inside a pause of its own track (they ran at
        # safepoints); before it, while one thread ran, Boehm collected inside allocations.
        first = min((a for v in by_tid.values() for a, _ in v), default=0)
        late = [g for g in gcs if ns(g["ts"]) >= first]
        inside = sum(any(a <= ns(g["ts"]) and ns(g["ts"]) + ns(g["dur"]) <= b for a, b in by_tid[g["tid"]])
                     for g in late)
        check(f"{name}: collections inside safepoint pauses", inside == len(late) and len(late) >= 4,
              f"{inside} of {len(late)}")
    # One thread: Boehm collects inside allocations, without a safepoint.
    name = "collections one thread"
    src = os.path.join(tmp, "alloc.lua")
    with open(src, "w") as f:
        f.write("local t\nfor i = 1, 300000 do t = {i} end\ncollectgarbage()\nprint(t[1])\n")
    ev = run_traced(tandem, tmp, name, [src])
    if ev is not None:
        check(f"{name}: collections", len(x_named(ev, "collection")) >= 2, len(x_named(ev, "collection")))


def test_green(tandem, tmp):
    for carriers in ("1", "2"):
        name = f"green carriers={carriers}"
        ev = run_traced(tandem, tmp, name, ["-Xthreads=green", "-Xcarriers=" + carriers, WORK])
        if ev is None:
            continue
        tr = tracks(ev)
        runs = [e for e in ev if e.get("ph") == "X" and e["cat"] == "thread" and e["name"].startswith("thread ")]
        on_carriers = [e for e in runs if tr.get(e["tid"], "").startswith("carrier ")]
        check(f"{name}: runs on carriers", len(on_carriers) == len(runs) and len(runs) >= 20, len(runs))
        check(f"{name}: several language threads ran", len({e["args"]["thread"] for e in runs}) >= 3)
        check(f"{name}: carrier tracks", sum(n.startswith("carrier ") for n in tr.values()) == int(carriers),
              tr)
    name = "native threads"
    ev = run_traced(tandem, tmp, name, ["-Xthreads=native", WORK, "3", "5"])
    if ev is not None:
        tr = tracks(ev)
        check(f"{name}: a track per language thread", sum(n.startswith("thread ") for n in tr.values()) == 3, tr)
        check(f"{name}: each thread's run", len([e for e in ev if e.get("ph") == "X" and e["cat"] == "thread"]) == 3)


def test_bounded(tandem, tmp):
    """More spans than a track's ring holds: the oldest are overwritten and counted, the
    track keeps exactly a ring's worth, the newest (the run's end is there)."""
    name = "bounded"
    path = os.path.join(tmp, "bounded.json")
    r = th.run_once(th.tandem_argv(tandem, "-Xtrace=" + path, "-Xthreads=green", "-Xcarriers=1", WORK,
                                   "switches", "6000"), cwd=HERE, timeout=300)
    check(f"{name}: exit 0", r.code == 0 and r.out.strip() == "12000", r.err[-500:])
    ev = validate(name, path)
    if ev is None:
        return
    with open(path) as f:
        other = json.load(f)["otherData"]
    ring = other["records_per_thread"]
    per_track = collections.Counter(e["tid"] for e in ev if e.get("ph") == "X")
    carrier = [t for t, n in tracks(ev).items() if n == "carrier 0"]
    check(f"{name}: the carrier's track holds a ring's worth", len(carrier) == 1 and per_track[carrier[0]] == ring,
          f"{per_track} ring {ring}")
    check(f"{name}: overwritten records counted", other["overwritten_records"] >= 12000 - ring, other)
    check(f"{name}: every track within its ring", max(per_track.values()) <= ring, per_track)


def test_ring_and_analyzer(tandem, tmp):
    for threads in ("native", "green"):
        name = f"ring full {threads}"
        ev = run_traced(tandem, tmp, name, ["-Xthreads=" + threads, "-Xprofile=methodcount",
                                            "-Xprofile.out=" + os.devnull] + SMALL + [WORK, "2", "5"])
        if ev is None:
            continue
        check(f"{name}: ring full spans", len(x_named(ev, "ring full")) >= 3, len(x_named(ev, "ring full")))
        tr = tracks(ev)
        an = [t for t, n in tr.items() if n == "analyzer 0"]
        check(f"{name}: analyzer track", len(an) == 1, tr)
        busy = [e for e in ev if e.get("ph") == "X" and e["tid"] in an and e["name"] == "analyzing"]
        check(f"{name}: analyzer busy spans", len(busy) >= 1 and all(e["args"]["chunks"] > 0 for e in busy))
    name = "analyzer phases"
    ev = run_traced(tandem, tmp, name, ["-Xprofile=callgraph", "-Xprofile.out=" + os.devnull, WORK, "2", "20"])
    if ev is not None:
        cats = collections.Counter((e["name"]) for e in ev if e.get("ph") == "X" and e["cat"] == "analyzer")
        check(f"{name}: busy and idle", cats["analyzing"] >= 1 and cats["idle"] >= 1, cats)
    name = "sequential"
    ev = run_traced(tandem, tmp, name, ["-Xprofile=callgraph", "-Xanalysis=sequential",
                                        "-Xprofile.out=" + os.devnull, WORK, "2", "5"])
    if ev is not None:
        check(f"{name}: no analyzer", not [e for e in ev if e.get("cat") == "analyzer"])


def test_sigint(tandem, tmp):
    for extra in ([], ["-Xprofile=calltree", "-Xprofile.out=" + os.path.join(tmp, "p.txt")],
                  ["-Xthreads=green"]):
        name = "SIGINT " + " ".join(extra)
        path = os.path.join(tmp, f"sigint{len(extra)}{extra[:1]}.json".replace("/", "_"))
        argv = th.tandem_argv(tandem, "-Xtrace=" + path, *extra, WORK, "forever")
        p = subprocess.Popen(argv, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        check(f"{name}: ready", line.strip() == "ready", line)
        p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            check(f"{name}: ends", False, "still running 120 s after SIGINT")
            continue
        check(f"{name}: dies of SIGINT", p.returncode == -signal.SIGINT, f"{p.returncode} {err[-500:]}")
        ev = validate(name, path)
        if ev is not None:
            check(f"{name}: has spans", len([e for e in ev if e.get("ph") == "X"]) > 0)


def test_errors(tandem, tmp):
    bad = os.path.join(tmp, "missing", "t.json")
    r = th.run_once(th.tandem_argv(tandem, "-Xtrace=" + bad, "-e", "print('ran')"), cwd=HERE, timeout=60)
    check("missing directory: exit 1", r.code == 1, r.code)
    check("missing directory: message", "cannot write the trace to " + bad in r.err, r.err)
    check("missing directory: program not run", "ran" not in r.out, r.out)
    r = th.run_once(th.tandem_argv(tandem, "-X"), cwd=HERE, timeout=60)
    check("-X lists -Xtrace", "-Xtrace" in r.out + r.err)
    # Ends other than the program's: an uncaught error (exit 1) and os.exit from a thread.
    for what, code, expect in (("error('boom')", "local h = thread.spawn(function() return 1 end) h:join() error('boom')", 1),
                               ("os.exit(3)", "local h = thread.spawn(function() os.exit(3) end) h:join()", 3)):
        src = os.path.join(tmp, f"end{expect}.lua")
        with open(src, "w") as f:
            f.write(code + "\n")
        for threads in ("native", "green"):
            name = f"ends with {what} {threads}"
            ev = run_traced(tandem, tmp, name, ["-Xthreads=" + threads, src], expect_code=expect)
            if ev is not None:  # the thread's track (under os.exit its run never ended)
                check(f"{name}: the thread's track", len(tracks(ev)) >= 2, tracks(ev))
    empty = tempfile.mkdtemp(dir=tmp)
    r = th.run_once(th.tandem_argv(tandem, WORK, "2", "2"), cwd=empty, timeout=60)
    check("no -Xtrace: no file", r.code == 0 and os.listdir(empty) == [], os.listdir(empty))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=th.default_tandem())
    a = ap.parse_args()
    tandem = os.path.abspath(a.tandem)
    tmp = tempfile.mkdtemp(prefix="tandem_trace_")
    try:
        tests = [test_collections, test_green, test_bounded, test_ring_and_analyzer, test_sigint, test_errors]
        check.run_tasks([lambda t=t: t(tandem, tmp) for t in tests], 2)
        return check.finish(f"{check.counts['checks']} checks")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
