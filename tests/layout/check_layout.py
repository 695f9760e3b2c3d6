#!/usr/bin/env python3
"""The architecture, checked: every quoted #include in the C sources crosses only the edges
the folder READMEs allow, and every folder that holds code has a README.md.

Each header is found by name in the folder that owns it (names are unique across the
repository: every file carries its module's prefix), so an include is an edge from the
including file's folder to the header's folder. ALLOWED below is the dependency table of
README.md's layout section; a header listed in ONLY is the one header of its folder that
the named folders may include (jit/ is reached from vm/ and cli/ through jit_api.h alone).

  python3 tests/layout/check_layout.py [--root DIR]
"""
import argparse
import os
import re
import sys

# folder -> the folders its files may include (itself always).
VM_ROOMS = ["vm", "vm/compiler", "vm/bytecode", "vm/threads", "vm/lib", "vm/prof", "vm/capi"]
ALLOWED = {
    "events": [],
    "trace": [],
    "gc": [],
    "cab": [],
    "profilers": ["events", "cab"],
    "vm": VM_ROOMS + ["gc", "cab", "profilers", "events", "jit", "trace"],
    "vm/compiler": ["vm", "gc"],
    "vm/bytecode": ["vm", "vm/compiler", "gc"],
    "vm/threads": ["vm", "vm/prof", "gc", "cab", "profilers", "events", "trace"],
    "vm/lib": ["vm", "vm/compiler", "vm/bytecode", "vm/threads", "vm/prof", "vm/capi", "gc"],
    "vm/capi": ["vm", "vm/bytecode", "vm/threads", "gc"],
    "vm/prof": ["vm", "vm/compiler", "vm/threads", "gc", "cab", "profilers", "events", "trace"],
    "jit": VM_ROOMS + ["gc", "cab", "profilers", "events"],
    "cli": VM_ROOMS + ["gc", "cab", "profilers", "events", "jit"],
}
# (folder reached, header): the only header of that folder that these folders may include.
ONLY = {("jit", "jit_api.h"): ["vm", "cli"]}
# Folders whose sources are checked but that are not modules (tests and benchmarks may
# include any module's public header).
CODE_EXTS = (".c", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    root = os.path.abspath(ap.parse_args().root)
    owner = {}      # header name -> folder
    sources = []    # (folder, path)
    problems = []
    for folder in ALLOWED:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            problems.append(f"{folder}/: missing")
            continue
        listing = sorted(os.listdir(d))
        names = [n for n in listing if n.endswith(CODE_EXTS)]
        # protoc-c generates <name>.pb-c.h from <name>.proto in the build directory: the
        # header belongs to the folder that holds the .proto.
        for n in listing:
            if n.endswith(".proto"):
                owner[n[:-len(".proto")] + ".pb-c.h"] = folder
        if names and not os.path.isfile(os.path.join(d, "README.md")):
            problems.append(f"{folder}/: holds code but has no README.md")
        for n in names:
            if n.endswith(".h"):
                if n in owner:
                    problems.append(f"{n}: in both {owner[n]}/ and {folder}/")
                owner[n] = folder
            sources.append((folder, os.path.join(d, n)))
    edges = 0
    for folder, path in sources:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(path, root)
        for inc in INCLUDE.findall(text):
            name = os.path.basename(inc)
            to = owner.get(name)
            if to is None:
                problems.append(f"{rel}: includes \"{inc}\", which no module folder holds")
                continue
            if inc != name:
                problems.append(f"{rel}: includes \"{inc}\" by path; include by name (the build's include path says what is reachable)")
            edges += 1
            if to == folder:
                continue
            if to not in ALLOWED[folder]:
                problems.append(f"{rel}: includes {to}/{name}, but {folder}/ may include only "
                                f"{', '.join(ALLOWED[folder]) or 'nothing outside itself'}")
                continue
            for (ofolder, oname), users in ONLY.items():
                if to == ofolder and folder in users and name != oname:
                    problems.append(f"{rel}: includes {to}/{name}; {folder}/ reaches {to}/ through {oname} only")
    for p in problems:
        print("FAIL", p)
    print(f"{'FAILED' if problems else 'ok'}: {len(sources)} files in {len(ALLOWED)} folders, "
          f"{edges} includes checked; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
