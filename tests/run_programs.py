#!/usr/bin/env python3
"""End-to-end program test runner for Tandem.

Every tests/programs/<feature>/<case>.lua is a test (files named mod_* and
anything under a modules/ folder are helpers, not tests).  It runs with the
current directory set to the folder that holds it, as `<impl> <case>.lua
[args]`.  Expectations sit next to it:

  <case>.expected   exact stdout (always present)
  <case>.status     exit status, only when it is not 0
  <case>.stderr     first stderr line with the "<program>: " prefix removed
                    (uncaught runtime errors); under an errors_uncaught/
                    folder, stderr must also hold a `stack traceback:` line
  <case>.stderr_re  hand-written Python regex the whole first stderr line
                    (prefix removed) must match (syntax errors, which Tandem
                    reports as file:line:col: message)
  <case>.stdin      fed to standard input (otherwise stdin is empty)
  <case>.args       command-line arguments, one per line
  <case>.opts       Tandem options (before the script), one per line; ignored
                    when running lua5.4

Tandem's command line: tandem $TANDEM_EXTRA_ARGS --extra-arg... <case>.opts
<case>.lua <case>.args (the last of repeated -X options wins;
pylib/tandem_harness.py, extra_args).

Modes:
  --tandem PATH        run the tests under Tandem and compare (default mode)
  --regen              rewrite .expected/.status/.stderr from lua5.4
                       (never .stderr_re, which is written by hand)
  --check-oracle       run lua5.4 and check the stored files still match it;
                       a .stderr_re is checked with its column part (the
                       first `:\\d+:`) removed, since lua5.4 prints no column

Exit status 0 when everything passed, 1 otherwise.
"""

import argparse
import concurrent.futures
import difflib
import os
import re
import signal
import sys

import tandem_harness as th

TIMEOUT_DEFAULT = 60
# Sanitizer builds run 2-10 times slower (scripts/sanitize.sh sets it to 4): every program's
# timeout, default or given, is multiplied by $TANDEM_TIMEOUT_SCALE.
TIMEOUT_SCALE = float(os.environ.get("TANDEM_TIMEOUT_SCALE", "1") or 1)
# Environment of every test: HOME is always set, and one variable has a
# known value (tests/programs/os reads both).
TEST_ENV = dict(os.environ)
TEST_ENV.setdefault("HOME", "/")
TEST_ENV["TANDEM_TEST_ENV"] = "tandem test value"
TRACEBACK_FOLDER = "errors_uncaught"
# How a regex's column part looks; removed to check it against lua5.4.
COLUMN_RE = re.escape(r":\d+:")


class Case:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.dir = os.path.dirname(self.path)
        self.file = os.path.basename(self.path)
        self.stem = self.path[: -len(".lua")]

    def side(self, ext):
        return self.stem + ext

    def read_side(self, ext, binary=False):
        p = self.side(ext)
        if not os.path.exists(p):
            return None
        with open(p, "rb") as f:
            data = f.read()
        return data if binary else data.decode("utf-8", "surrogateescape")

    def args(self):
        text = self.read_side(".args")
        if text is None or text == "":
            return []
        if text.endswith("\n"):
            text = text[:-1]
        return text.split("\n")

    def wants_traceback(self):
        return TRACEBACK_FOLDER in self.path.split(os.sep)

    def name(self, roots):
        for r in roots:
            r = os.path.abspath(r)
            parent = os.path.dirname(r)
            if self.path.startswith(r + os.sep) or self.path == r:
                return os.path.relpath(self.path, parent)
        return self.path


class Result:
    def __init__(self, stdout, stderr, status, signal_no, timed_out):
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
        self.signal = signal_no
        self.timed_out = timed_out


def discover(roots, filt, skip=()):
    cases = []
    for root in roots:
        if os.path.isfile(root):
            cases.append(Case(root))
            continue
        if not os.path.isdir(root):
            sys.exit("run_programs.py: no such file or folder: %s" % root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "modules" and d not in skip)
            for fn in sorted(filenames):
                if fn.endswith(".lua") and not fn.startswith("mod_"):
                    cases.append(Case(os.path.join(dirpath, fn)))
    if filt:
        cases = [c for c in cases if filt in c.path]
    return cases


def run(argv_prefix, case, timeout, opts=()):
    stdin_data = case.read_side(".stdin", binary=True)
    argv = list(argv_prefix) + list(opts) + [case.file] + case.args()
    # A session of its own, so that a timeout kills the whole group.
    r = th.run_once(argv, cwd=case.dir, env=TEST_ENV, stdin=stdin_data or b"", timeout=timeout,
                    new_session=True)
    if r.timed_out:
        return Result(r.stdout, r.stderr, None, None, True)
    if r.code < 0:
        return Result(r.stdout, r.stderr, None, -r.code, False)
    return Result(r.stdout, r.stderr, r.code, None, False)


def decode(b):
    return b.decode("utf-8", "surrogateescape")


def first_stderr_line(stderr, exe):
    """First line of stderr, without the `<program>: ` prefix."""
    lines = decode(stderr).split("\n")
    line = lines[0] if lines else ""
    # lua.c prints argv[0] as given (a full path when run by path).
    for prefix in (exe + ": ", os.path.basename(exe) + ": ", "tandem: ", "lua5.4: ", "lua: "):
        if line.startswith(prefix):
            return line[len(prefix):]
    return line


def short_diff(expected, actual, limit=12):
    diff = list(
        difflib.unified_diff(
            expected.splitlines(), actual.splitlines(),
            "expected", "actual", n=1, lineterm=""
        )
    )[2:]
    if len(diff) > limit:
        diff = diff[:limit] + ["... (%d more diff lines)" % (len(diff) - limit)]
    return "\n".join("    " + d for d in diff)


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return "signal %d" % n


def compare(case, res, exe, oracle):
    """List of problems (strings); empty when the run matches the stored files.

    oracle: True when checking lua5.4 itself (regexes lose their column part,
    no traceback requirement beyond what lua5.4 prints anyway)."""
    problems = []
    if res.timed_out:
        return ["timed out"]
    if res.signal is not None:
        return ["killed by %s" % signal_name(res.signal)
                + ("; stderr: " + first_stderr_line(res.stderr, exe)
                   if res.stderr else "")]
    expected = case.read_side(".expected")
    if expected is None:
        return ["no .expected file (run --regen)"]
    status_text = case.read_side(".status")
    want_status = int(status_text.strip()) if status_text else 0
    actual = decode(res.stdout)
    if actual != expected:
        problems.append("stdout differs:\n" + short_diff(expected, actual))
    if res.status != want_status:
        msg = "exit status %s, expected %d" % (res.status, want_status)
        if res.stderr:
            msg += "; stderr: " + first_stderr_line(res.stderr, exe)
        problems.append(msg)
    want_err = case.read_side(".stderr")
    if want_err is not None:
        want_err = want_err.rstrip("\n")
        got = first_stderr_line(res.stderr, exe)
        if got != want_err:
            problems.append("stderr first line:\n    expected: %s\n    actual:   %s"
                            % (want_err, got))
    want_re = case.read_side(".stderr_re")
    if want_re is not None:
        pattern = want_re.strip("\n")
        if oracle:
            pattern = re.sub(COLUMN_RE, ":", pattern, count=1)
        got = first_stderr_line(res.stderr, exe)
        if not re.fullmatch(pattern, got):
            problems.append("stderr first line does not match regex:\n"
                            "    regex:  %s\n    actual: %s" % (pattern, got))
    if case.wants_traceback() and not oracle:
        if "stack traceback:" not in decode(res.stderr).split("\n"):
            problems.append("stderr has no `stack traceback:` line")
    return problems


def write_or_remove(path, text):
    if text is None:
        if os.path.exists(path):
            os.remove(path)
        return
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def regen(case, res, exe):
    if res.timed_out:
        return ["timed out under the oracle"]
    if res.signal is not None:
        return ["oracle killed by %s" % signal_name(res.signal)]
    write_or_remove(case.side(".expected"), decode(res.stdout))
    write_or_remove(case.side(".status"),
                    "%d\n" % res.status if res.status != 0 else None)
    if not os.path.exists(case.side(".stderr_re")):
        err = None
        if res.status != 0 and res.stderr:
            err = first_stderr_line(res.stderr, exe) + "\n"
        write_or_remove(case.side(".stderr"), err)
    return []


def main():
    ap = argparse.ArgumentParser(
        description="Run Tandem's end-to-end Lua program tests.")
    ap.add_argument("--tandem", help="path to the tandem binary")
    ap.add_argument("--lua5.4", dest="lua", default=th.find_lua("lua5.4") or "",
                    help="reference interpreter (empty: none)")
    ap.add_argument("--filter", default="", help="only cases whose path contains this")
    ap.add_argument("--skip-folder", action="append", default=[], metavar="NAME",
                    help="leave out subfolders of this name (repeatable)")
    ap.add_argument("--extra-arg", action="append", default=[],
                    help="option passed to tandem before the script (repeatable)")
    ap.add_argument("--regen", action="store_true",
                    help="rewrite the expectation files from lua5.4")
    ap.add_argument("--check-oracle", action="store_true",
                    help="check the stored expectations against lua5.4")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_DEFAULT)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-v", "--verbose", action="store_true", help="print passing cases too")
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    opts = ap.parse_args(th.join_extra_args(sys.argv[1:]))

    oracle_mode = opts.regen or opts.check_oracle
    if oracle_mode:
        if not opts.lua:
            sys.exit("run_programs.py: --regen/--check-oracle need lua5.4 (--lua5.4 PATH)")
        exe = opts.lua
        prefix = [exe]
    else:
        if not opts.tandem:
            sys.exit("run_programs.py: --tandem PATH is required")
        exe = os.path.abspath(opts.tandem)
        if not os.access(exe, os.X_OK):
            sys.exit("run_programs.py: not an executable: %s" % exe)
        prefix = th.tandem_argv(exe, *opts.extra_arg)   # $TANDEM_EXTRA_ARGS first, then --extra-arg

    cases = discover(opts.dirs, opts.filter, opts.skip_folder)
    if not cases:
        sys.exit("run_programs.py: no test programs found")

    def job(case):
        topts = case.read_side(".opts") if not oracle_mode else None
        res = run(prefix, case, opts.timeout * TIMEOUT_SCALE, topts.split() if topts else ())
        if opts.regen:
            return regen(case, res, exe)
        problems = compare(case, res, exe, oracle=opts.check_oracle)
        if problems and not oracle_mode and opts.lua:
            ores = run([opts.lua], case, opts.timeout)
            if compare(case, ores, opts.lua, oracle=True):
                problems.append("note: lua5.4 does not match the stored files either")
        return problems

    with concurrent.futures.ThreadPoolExecutor(max(1, opts.jobs)) as pool:
        results = list(pool.map(job, cases))

    failed = 0
    for case, problems in zip(cases, results):
        name = case.name(opts.dirs)
        if problems:
            failed += 1
            print("FAIL %s: %s" % (name, "\n  ".join(problems)))
        elif opts.verbose:
            print("ok   %s" % name)
    what = "regenerated" if opts.regen else "passed"
    print("%s: %d/%d %s%s" % (
        "oracle" if oracle_mode else "tandem",
        len(cases) - failed, len(cases), what,
        "" if not failed else ", %d failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
