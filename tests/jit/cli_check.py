#!/usr/bin/env python3
"""The JIT's command line: -Xjit, -Xdump=jit and -Xjit.perfmap are listed by `tandem -X` with
their values and defaults, bad values are rejected naming the option and its valid values
(exit 2), -Xdump=jit prints each compiled function's machine code interleaved with its
bytecode, -Xjit.perfmap writes /tmp/perf-PID.map, profiling runs the interpreter, and -Xstats
counts the misses of the field sites' inline caches (every reason met by inline_caches.lua)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import tandem_harness as th

PROG = """
local function sum(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
print(sum(1000), select("#", ...))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    t = th.find_tandem(ap.parse_args().tandem, required=True)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    def run(*args):
        return th.run_once([t, *args], timeout=60)

    listing = run("-X").out
    check(re.search(r"-Xjit\b.*\n.*values: on, off; default: on", listing), "-X lists -Xjit with on/off, default on")
    check(re.search(r"-Xdump\b.*\n.*values: bytecode, jit", listing), "-X lists -Xdump=jit")
    check(re.search(r"-Xjit\.perfmap\b", listing), "-X lists -Xjit.perfmap")
    check("profil" in listing.split("-Xjit ")[1].split("\n")[0], "-Xjit's help says what profiling runs")

    for bad, name in (("-Xjit=yes", "-Xjit"), ("-Xjit", "-Xjit"), ("-Xdump=asm", "-Xdump"),
                      ("-Xjit.perfmap=1", "-Xjit.perfmap")):
        r = run(bad, "-e", "print(1)")
        check(r.code == 2 and name in r.err, "%s is rejected with exit 2 naming %s (got %d: %s)" %
              (bad, name, r.code, r.err.strip()))
    r = run("-Xjit=yes", "-e", "print(1)")
    check("on, off" in r.err, "a bad -Xjit value lists on, off")

    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "sum.lua")
        with open(prog, "w") as f:
            f.write(PROG)
        r = run("-Xdump=jit", prog)
        check(r.code == 0 and r.out == "500500\t0\n", "-Xdump=jit still runs the program")
        err = r.err
        check(re.search(r"^jit: sum .*sum\.lua:2: \d+ instructions", err, re.M), "-Xdump=jit names the function")
        check(re.search(r"FORLOOP.*\n(.*\n)*?\s+0x[0-9a-f]+\s+add rax", err), "FORLOOP's template is listed after it")
        check(re.search(r"^\s+\d+\s+\[\d+\]\s+ADD\s", err, re.M), "bytecode lines are interleaved")
        check(re.search(r"VARARG.*\n\s+; step", err), "instructions without a template are marked as steps")
        check("out of line" in err and "ret" in err, "steps, polls and the epilogue are listed")

        p = subprocess.Popen([t, "-Xjit=on", "-Xjit.perfmap", prog], stdout=subprocess.PIPE, text=True)
        out, _ = p.communicate(timeout=60)
        path = "/tmp/perf-%d.map" % p.pid
        check(out == "500500\t0\n", "-Xjit.perfmap runs the program")
        try:
            with open(path) as f:
                lines = f.read().splitlines()
            os.remove(path)
        except OSError:
            lines = []
        check(any(re.match(r"^[0-9a-f]+ [0-9a-f]+ lua:sum .*sum\.lua:2$", l) for l in lines),
              "%s names sum (got %r)" % (path, lines[:3]))

        r = run("-Xjit=on", "-Xdump=jit", "-Xprofile=methodcount", "-Xanalysis=sequential", prog)
        check(r.code == 0 and "call entry: the frame's events" in r.err and "500500" in r.out,
              "while profiling, compiled code emits the events")
        r = run("-Xjit=off", prog)
        check(r.out == "500500\t0\n", "-Xjit=off runs the interpreter")

    # The inline caches of field sites (jit/jit_ic.c): inline_caches.lua makes every guard of
    # the cached probes fail at least once (each miss reason counted by -Xstats), with the
    # output the interpreter and lua5.4 give.
    here = os.path.dirname(os.path.abspath(__file__))

    def run_expected(folder, name):
        # tests/programs/<folder>/<name>.lua under -Xjit=on -Xstats, checked against its
        # .expected; the run, for its stderr
        prog = os.path.join(here, "..", "programs", folder, name)
        with open(prog + ".expected") as f:
            expected = f.read()
        r = run("-Xjit=on", "-Xstats", prog + ".lua")
        check(r.code == 0 and r.out == expected, "%s.lua under -Xstats prints its expectation" % name)
        return r

    r = run_expected("metatables", "inline_caches")
    m = re.search(r"^\[stats\] jit: (\d+) field sites with an inline cache; misses: (.*); stepped (\d+)$", r.err, re.M)
    check(m is not None, "-Xstats reports the inline caches (got %r)" % r.err[-400:])
    if m:
        check(int(m.group(1)) > 0, "field sites have caches")
        for reason in m.group(2).split(", "):
            name, _, n = reason.rpartition(" ")
            check(int(n) > 0, "inline_caches.lua makes the guard '%s' fail (%s)" % (name, m.group(2)))
        check(int(m.group(3)) > 0, "reads the caches cannot answer are stepped")

    # Known types (jit/jit_types.c): known_types.lua rewrites registers whose types compiled
    # code knows (debug.setlocal from metamethods that steps run), so guarded entries fail
    # and step, with the output the interpreter and lua5.4 give.
    r = run_expected("numbers", "known_types")
    m = re.search(r"^\[stats\] jit: guarded entries failed (\d+)$", r.err, re.M)
    check(m is not None and int(m.group(1)) > 0, "known_types.lua makes guarded entries fail (got %r)" % r.err[-300:])
    r = run("-Xjit=on", "-Xdump=jit", os.path.join(here, "..", "programs", "numbers", "known_types.lua"))
    check("; known: R" in r.err, "-Xdump=jit shows the known types")

    for f in failures:
        print("FAIL: " + f)
    print("jit cli: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
