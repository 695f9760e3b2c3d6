#!/usr/bin/env python3
"""What the profile library (require "profile", docs/profile-library.md) costs a program, in
instructions counted by valgrind --tool=callgrind (they repeat exactly; wall-clock times on
this machine do not: /work/shared/notes/measuring.md):

  never     the program never calls profile.start (it does not even require the library)
  after     a phase of nothing first (profile.start{"methodcount"}; profile.stop()), then the
            same program: what the rest of a run pays once the library has been used
  base      with --base BINARY: the program under a tandem built without the library (the
            commit before it), the "never" case's reference

    python3 bench/profile_library_cost.py --tandem build/tandem [--base OTHER/tandem]
                                          [--jit on|off] [--only fib.lua:27 ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = ["fib.lua:27", "mandelbrot.lua:200", "oo_shapes.lua:400", "closures.lua:40"]
WRAP = 'local prog = arg[1]\n%sarg = {[0] = prog, arg[2]}\ndofile(prog)\n'
PHASE = 'local profile = require "profile"\nprofile.start{"methodcount"}\nprofile.stop()\n'


def count(binary, jit, wrapper, prog, n):
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, "-Xjit=" + jit,
                        wrapper, os.path.join(HERE, "programs", prog), n], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or m is None:
        sys.exit(f"{binary} {prog}: failed\n{r.stderr[-500:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--base")
    ap.add_argument("--jit", default="on", choices=("on", "off"))
    ap.add_argument("--only", action="append")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        never, after = os.path.join(tmp, "never.lua"), os.path.join(tmp, "after.lua")
        with open(never, "w") as f:
            f.write(WRAP % "")
        with open(after, "w") as f:
            f.write(WRAP % PHASE)
        print(f"instructions (callgrind), -Xjit={a.jit}")
        for spec in a.only or PROGRAMS:
            prog, n = spec.split(":")
            c_never = count(a.tandem, a.jit, never, prog, n)
            c_after = count(a.tandem, a.jit, after, prog, n)
            line = f"{prog} {n}: never {c_never}  after a phase {c_after} ({100.0 * (c_after / c_never - 1):+.2f}%)"
            if a.base:
                c_base = count(a.base, a.jit, never, prog, n)
                line += f"  base {c_base} (never vs base {100.0 * (c_never / c_base - 1):+.3f}%)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
