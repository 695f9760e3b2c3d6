"""The Python side of running tandem, shared by tests/, bench/ and profilers/tools/: where the
binary is, one timed run of a process, the -Xstats lines, JSON profiles and how two profiles
compare, and the check list the test runners report from. See README.md beside this file.

Import it as `import tandem_harness as th`: ctest puts this folder on PYTHONPATH (the tests'
CMakeLists.txt); the scripts people run by hand add it with the one bootstrap line given in
README.md.
"""
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# -----------------------------------------------------------------------------------------
# Finding the programs
# -----------------------------------------------------------------------------------------
ENV_TANDEM = "TANDEM_BIN"


def default_tandem():
    """Where the tandem binary is when no one says: $TANDEM_BIN, else build/tandem of the
    repository (whether or not it is there yet)."""
    return os.environ.get(ENV_TANDEM) or os.path.join(REPO, "build", "tandem")


def find_tandem(path=None, required=False):
    """The tandem binary as an absolute path: [path] (as given, then relative to the
    repository) when given, else default_tandem(). None if it is not there, or with
    [required] the end of the script with a message."""
    wanted = path or default_tandem()
    for candidate in (wanted, os.path.join(REPO, wanted)):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    if required:
        raise SystemExit("%s: no tandem binary at %s" % (os.path.basename(sys.argv[0]), wanted))
    return None


def tandem_option():
    """The tandem binary named by the one option of a simple test runner, --tandem PATH."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    return find_tandem(ap.parse_args().tandem, required=True)


ENV_EXTRA_ARGS = "TANDEM_EXTRA_ARGS"


def extra_args():
    """Options for every tandem run of the runners that honour them (tests/run_programs.py,
    tests/profile/run_profile_tests.py, run_analysis_tests.py, run_known_profiles.py), right
    after the binary:
    $TANDEM_EXTRA_ARGS split at white space (none when unset). scripts/sanitize.sh thread sets
    -Xjit=off: TSan does not see the JIT's generated code (tests/README.md, "Sanitizers"). An
    option a runner passes itself comes later on the command line and wins (the last of
    repeated -X options counts)."""
    return os.environ.get(ENV_EXTRA_ARGS, "").split()


def tandem_argv(tandem, *args):
    """The command line of one tandem run by a test runner: [tandem, extra_args(), args]."""
    return [tandem, *extra_args(), *args]


def jit_turned_off():
    """Whether extra_args() turn the JIT off: checks that compare the JIT with the interpreter
    (or that switch the JIT on themselves) are then skipped, and say so."""
    return any(a == "-Xjit=off" for a in extra_args())


def jit_modes_of(tandem):
    """The -Xjit values a runner compares: ["on", "off"], or ["off"] when [tandem] is built
    without the JIT or extra_args() turn it off (said on stdout, so the skip shows)."""
    r = run_once(tandem_argv(tandem, "-X"), timeout=60)
    if "built without the JIT" in r.out + r.err or jit_turned_off():
        print("JIT checks skipped: no JIT in this build, or TANDEM_EXTRA_ARGS turns it off")
        return ["off"]
    return ["on", "off"]


def find_lua(name="lua5.4"):
    """The reference interpreter (a name on PATH or a path), or None."""
    return shutil.which(name) if name else None


def join_extra_args(argv):
    """`--extra-arg -Xfoo` -> `--extra-arg=-Xfoo` (argparse would take -Xfoo for an option)."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--extra-arg" and i + 1 < len(argv):
            out.append("--extra-arg=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


# -----------------------------------------------------------------------------------------
# Running
# -----------------------------------------------------------------------------------------
class Run:
    """One finished run. code: the exit status, -N when killed by signal N, None when it
    timed out (and was killed); stdout/stderr: bytes (out/err: decoded); seconds: wall clock
    of the process; cpu_s: its user + system time; rss_kb: its peak resident size."""

    def __init__(self, code, stdout, stderr, seconds=0.0, cpu_s=0.0, rss_kb=0, timed_out=False):
        self.code, self.stdout, self.stderr = code, stdout, stderr
        self.seconds, self.cpu_s, self.rss_kb, self.timed_out = seconds, cpu_s, rss_kb, timed_out

    @property
    def out(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self):
        return self.stderr.decode("utf-8", "replace")


# Linux records in ru_maxrss the resident size a process had when it called exec, so a
# program started straight from this (15 MB) Python process would never show less than
# 15 MB. With exact_rss a small /bin/sh starts it in the background, says its pid and exits;
# as a child subreaper this process inherits the program and waits for it itself. The
# program is held (a read of a pipe this process closes) until sh is gone.
PR_SET_CHILD_SUBREAPER = 36
_subreaper = []


def _become_subreaper():
    if not _subreaper:
        import ctypes
        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError("prctl(PR_SET_CHILD_SUBREAPER) failed")
        _subreaper.append(True)


def _limited(argv, mb):
    """[argv] run under an address-space limit of [mb] MiB: a /bin/sh sets it (ulimit -v,
    KiB) and execs the program, which keeps the pid, the process group and the status. Not a
    preexec_fn: that runs Python in the forked child, which can deadlock on a lock another
    thread of this process held at the fork (the Python manual warns of it). bytecode_bad
    starts its runs from a thread pool, with timers running; two of its runs, refusals that
    take 0.04 s, once timed out at 10 s at a load average of 14, which either may explain."""
    return ["/bin/sh", "-c", 'ulimit -v %d && exec "$@"' % (mb << 10), "sh", *argv]


def run_once(argv, cwd=None, env=None, stdin=None, timeout=None, new_session=False, mem_limit_mb=None,
             exact_rss=False):
    """Run [argv] to its end and return a Run. stdin: bytes or str fed to it (else it reads
    /dev/null); timeout: seconds, after which it is killed (its whole process group with
    new_session); mem_limit_mb: an address-space limit; exact_rss: see above. A program that
    cannot start gives code 127 and the reason on stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin is not None:
            inp.write(stdin.encode() if isinstance(stdin, str) else stdin)
            inp.seek(0)
        stdin_f = inp if stdin is not None else subprocess.DEVNULL
        start = time.perf_counter()
        try:
            if exact_rss:
                _become_subreaper()
                # The program waits (reading [go]) until sh has exited and been reaped: a
                # program that ended while sh still ran was sometimes reaped by sh itself
                # (17 of 300 runs of /bin/false), and its status and usage were lost.
                rfd, wfd = os.pipe()
                go_r, go_w = os.pipe()
                # sh gives a background job /dev/null for stdin: fd 9 keeps the real one.
                launcher = ('exec 9<&0; { read -r _ <&%d; exec "$@" %d<&- <&9 9<&-; } %d>&- & echo $! >&%d'
                            % (go_r, go_r, wfd, wfd))
                sh = subprocess.Popen(["/bin/sh", "-c", launcher, "sh", *argv], cwd=cwd, env=env, stdin=stdin_f,
                                      stdout=out, stderr=err, pass_fds=(wfd, go_r), start_new_session=new_session)
                os.close(wfd)
                os.close(go_r)
                sh.wait()
                os.close(go_w)  # end of file: the program starts
                with os.fdopen(rfd) as f:
                    pid, proc = int(f.read().strip()), None
            else:
                proc = subprocess.Popen(_limited(argv, mem_limit_mb) if mem_limit_mb else argv, cwd=cwd, env=env,
                                        stdin=stdin_f, stdout=out, stderr=err, start_new_session=new_session)
                pid = proc.pid
        except (OSError, ValueError) as e:
            return Run(127, b"", str(e).encode())
        done, killed = threading.Lock(), []

        def kill():
            with done:
                if killed is None:
                    return
                killed.append(True)
                try:
                    os.killpg(pid, signal.SIGKILL) if new_session else os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - start
        if timer:
            timer.cancel()
        with done:
            timed_out = bool(killed)
            killed = None  # noqa: F841  (the timer must not signal a pid that may be reused)
        code = None if timed_out else -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if proc is not None:
            proc.returncode = -9 if code is None else code  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return Run(code, out.read(), err.read(), seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                   timed_out)


def tandem_runner(tandem, cwd=None, env=None, timeout=None, with_extra_args=False):
    """run(*args, stdin=None, cwd=cwd, timeout=timeout) -> (exit code, stdout, stderr) of
    `tandem ARGS` (see run_once); with [with_extra_args], `tandem EXTRA ARGS` (tandem_argv)."""
    def run(*args, stdin=None, cwd=cwd, timeout=timeout):
        argv = tandem_argv(tandem, *args) if with_extra_args else [tandem, *args]
        r = run_once(argv, cwd=cwd, env=env, stdin=stdin, timeout=timeout)
        return r.code, r.out, r.err
    return run


def signal_when_ready(argv, sig, cwd=None, timeout=60):
    """Starts [argv], reads its first line of output (a program's "ready"), sends it [sig] and
    waits for its end. Returns (first line as bytes, exit status: -signal when the signal
    killed it; None if it still ran [timeout] s after the signal, when it is killed)."""
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline()
    p.send_signal(sig)
    try:
        p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return line, None
    return line, p.returncode


def probe(cab_bench):
    """(round-trip ns, placement class) of the two CPUs right now (cab_bench -P); (None,
    "unknown") without cab_bench or an answer."""
    if not cab_bench:
        return None, "unknown"
    try:
        out = subprocess.run([cab_bench, "-P"], capture_output=True, text=True, timeout=30).stdout.split()
    except subprocess.TimeoutExpired:
        return None, "unknown"
    # "probe NS CLASS" where CLASS may be two words ("very far")
    if len(out) >= 3 and out[0] == "probe":
        return float(out[1]), "_".join(out[2:])
    return None, "unknown"


# -----------------------------------------------------------------------------------------
# -Xstats
# -----------------------------------------------------------------------------------------
# What tandem prints at exit with -Xstats (cli/cli_main.c stats_report, vm/prof/vm_prof.c
# vm_prof_print_stats): one line per CAB ("thread N" or "carrier N"), then their total.
_COUNTERS = (r"produced (\d+) consumed (\d+) dropped (\d+) chunks (\d+) blocks (\d+) blocked ([0-9.]+) ms")
_ANALYSED = (r" analysed: by the analyzer (\d+) chunks ([0-9.]+) ms, by the program thread (\d+) chunks ([0-9.]+) ms")
_RE_CAB = re.compile(r"\[stats\] cab (thread \d+|carrier \d+): " + _COUNTERS +
                     r" analyzer (-?\d+) idle ([0-9.]+) ms \((\d+) sleeps\) waits outside safepoints (\d+)" + _ANALYSED)
_RE_TOTAL = re.compile(r"\[stats\] cab total: " + _COUNTERS + r" waits outside safepoints (\d+)" + _ANALYSED)
_RE_TOPOLOGY = re.compile(r"\[stats\] topology: (.*)")
_RE_APP_CPUS = re.compile(r"\[stats\] placement: application threads on CPU\(s\) ([0-9,-]+)")
COUNTERS = ("produced", "consumed", "dropped", "chunks", "blocks", "blocked_ms")


def _counters(m, first):
    """The six counters from group [first] of [m] on, and the line."""
    c = {k: int(m.group(first + i)) for i, k in enumerate(COUNTERS[:-1])}
    c["blocked_ms"] = float(m.group(first + 5))
    c["line"] = m.group(0)
    return c


def _analysed(m, first):
    """Who analysed the chunks (-Xcab.full): from group [first] of [m] on."""
    return {"analyzer_chunks": int(m.group(first)), "analyzer_busy_ms": float(m.group(first + 1)),
            "self_chunks": int(m.group(first + 2)), "self_ms": float(m.group(first + 3))}


class Stats:
    """The -Xstats lines of a run's stderr. total: {produced, consumed, dropped, chunks, blocks,
    blocked_ms, waits_outside, analyzer_chunks, analyzer_busy_ms, self_chunks, self_ms,
    line} of the "cab total" line, None without one (no -Xstats,
    no profile, or os.exit); cabs: the same per CAB with who, analyzer, idle_ms, idle_sleeps; topology and
    app_cpus: those lines' text, or None."""

    def __init__(self, stderr):
        self.cabs = []
        for m in _RE_CAB.finditer(stderr):
            c = _counters(m, 2)
            c.update(who=m.group(1), analyzer=int(m.group(8)), idle_ms=float(m.group(9)),
                     idle_sleeps=int(m.group(10)), waits_outside=int(m.group(11)), **_analysed(m, 12))
            self.cabs.append(c)
        self.total = None
        for m in _RE_TOTAL.finditer(stderr):
            self.total = _counters(m, 1)
            self.total["waits_outside"] = int(m.group(7))
            self.total.update(_analysed(m, 8))
        m = _RE_TOPOLOGY.search(stderr)
        self.topology = m.group(1) if m else None
        m = _RE_APP_CPUS.search(stderr)
        self.app_cpus = m.group(1) if m else None

    def counters(self):
        """Flat fields for a table: the totals' counters, and analyzer_idle_ms (the analyzers'
        idle times added up; each CAB line repeats its analyzer's as of when it was printed, so
        the largest per analyzer counts) with the number of analyzers."""
        s = {k: self.total[k] for k in COUNTERS} if self.total else {}
        idle = {}
        for c in self.cabs:
            if c["analyzer"] >= 0:   # -1: a sequential stream, no analyzer thread
                idle[c["analyzer"]] = max(idle.get(c["analyzer"], 0.0), c["idle_ms"])
        if idle:
            s["analyzer_idle_ms"] = sum(idle.values())
            s["analyzers"] = len(idle)
        return s


def parse_stats(stderr):
    return Stats(stderr)


def nothing_lost(total):
    """Exhaustive: every event produced was consumed and none dropped (total: Stats.total)."""
    return total is not None and total["produced"] == total["consumed"] and total["dropped"] == 0


# -----------------------------------------------------------------------------------------
# Profiles
# -----------------------------------------------------------------------------------------
SMALL_RING = ["-Xcab.size=12k", "-Xcab.chunk=4k"]   # the smallest valid ring: producers block and wrap


FULL_RING = ("block", "self", "adaptive")  # -Xcab.full


def mode_opts(mode):
    """The options of an analysis mode: sequential, concurrent (with -Xstats), small
    (concurrent on the smallest ring), or small-self / small-adaptive (the smallest ring, and
    a program thread analyses its own full ring: -Xcab.full)."""
    if mode == "sequential":
        return ["-Xanalysis=sequential"]
    opts = ["-Xanalysis=concurrent", "-Xstats"]
    if mode.startswith("small"):
        opts += SMALL_RING
        if mode != "small":
            opts.append("-Xcab.full=" + mode[len("small-"):])
    return opts


def json_docs(text):
    """The JSON documents of a report, in order (a file may hold one per analysis); raises
    ValueError (json.JSONDecodeError) on bad JSON."""
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        d, i = dec.raw_decode(text, i)
        docs.append(d)


def parse_methodcount(report):
    """({function: calls}, total calls, functions) of a methodcount text report; raises
    StopIteration, AttributeError, KeyError or AssertionError on a malformed one."""
    lines = report.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("methodcount:"))
    m = re.match(r"methodcount: (\d+) calls of (\d+) functions$", lines[i])
    fn = {}
    for l in lines[i + 1:]:
        m2 = re.match(r"\s*(\d+)\s+([\d.]+)%\s+(.*)$", l)
        if m2:
            fn[m2.group(3)] = int(m2.group(1))
        elif fn:
            break   # before the rows: the column titles and notes (estimates, partial)
    total = fn.pop("total")
    assert total == int(m.group(1)), (total, m.group(0))
    return fn, total, int(m.group(2))


def load_profile(path):
    """Every JSON document of the profile file [path] (tandem -Xprofile.format=json: one per
    analysis, whitespace between); raises ValueError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError("cannot read %s: %s" % (path, e.strerror))
    except UnicodeDecodeError:
        raise ValueError("%s is not UTF-8" % path)
    try:
        docs = json_docs(text)
    except json.JSONDecodeError as e:
        raise ValueError("%s: not a JSON profile: %s" % (path, e))
    if any(not isinstance(doc, dict) or "analysis" not in doc for doc in docs):
        raise ValueError("%s: a JSON document without \"analysis\"" % path)
    if not docs:
        raise ValueError("%s: no profile in it" % path)
    return docs


def _add(items, key, n):
    items[key] = items.get(key, 0) + n


def items_of(doc, metric):
    """{item key: count} of one profile: what its analysis counts (a function, an edge, a
    calling context, a function's accesses or misses, a function's path; or its "items");
    raises ValueError for an analysis or a metric it does not know."""
    a = doc["analysis"]
    items = {}
    if "items" in doc:
        for it in doc["items"]:
            k = it["key"]
            _add(items, json.dumps(k) if isinstance(k, (list, dict)) else k, it["count"])
    elif a == "methodcount":
        for f in doc["functions"]:
            _add(items, f["function"], f["calls"])
    elif a == "callgraph":
        for e in doc["edges"]:
            _add(items, (e["caller"], e["callee"]), e["calls"])
    elif a == "calltree":
        # contexts: the path of function names from the thread's root; summed over threads
        for t in doc["threads"]:
            path = {}
            for n in t["nodes"]:
                if n["parent"] is None:
                    path[n["id"]] = ()
                    continue
                p = path[n["parent"]] + (n["function"],)
                path[n["id"]] = p
                if n["function"] != "[C]":  # a [C] node counts gaps, not calls
                    _add(items, p, n["calls"])
    elif a == "pathprof":
        for pth in doc["paths"]:
            _add(items, (pth["function"], pth["path"]), pth["count"])
    elif a == "cachesim":
        m = metric or "accesses"
        if m not in ("accesses", "l1_misses", "l2_misses"):
            raise ValueError("cachesim has no metric %s (accesses, l1_misses, l2_misses)" % m)
        for f in doc["functions"]:
            _add(items, f["function"], f[m])
    else:
        raise ValueError("no items known for analysis %s (give the profile an \"items\" list)" % a)
    return items


def error_rate(actual, sampled, rate, min_count=0):
    """The CAB paper's error rate (section 6.4) of [sampled] (counts observed at [rate])
    against [actual]: (mean of |actual - sampled / rate| / actual, items counted, items
    missing from sampled). [min_count] > 0: only the items counted at least that many times
    exhaustively."""
    total, n, missing = 0.0, 0, 0
    for k, a in actual.items():
        if a <= 0 or a < min_count:
            continue
        s = sampled.get(k, 0)
        missing += k not in sampled
        total += abs(a - s / rate) / a
        n += 1
    return (total / n if n else float("nan")), n, missing


def weighted_error(actual, sampled, rate):
    """The weighted error of [sampled] (counts observed at [rate]) against [actual]: the sum
    over every item of either profile of |actual - sampled / rate|, divided by the sum of the
    actual counts (an item the sample invents counts fully). Unlike the paper's mean, items
    counted a few times weigh as little as they matter. NaN for an empty [actual]."""
    total = sum(a for a in actual.values() if a > 0)
    if total <= 0:
        return float("nan")
    diff = 0.0
    for k in set(actual) | set(sampled):
        diff += abs(actual.get(k, 0) - sampled.get(k, 0) / rate)
    return diff / total


def hot_items(counts, share=0.9):
    """The hottest items of [counts] that make up [share] of its total: the fewest, taken in
    decreasing count (ties broken by key, so the set is the same for the same counts)."""
    total = sum(c for c in counts.values() if c > 0)
    hot, acc = set(), 0.0
    for k, c in sorted(counts.items(), key=lambda kc: (-kc[1], str(kc[0]))):
        if acc >= share * total or c <= 0:
            break
        hot.add(k)
        acc += c
    return hot


def hot_overlap(actual, sampled, share=0.9):
    """Of the items making up [share] of [actual], the fraction that the sample ranks in its
    own top [share] (hot_items of each); NaN for an empty [actual]. The rate does not
    matter: scaling does not change a ranking."""
    ha = hot_items(actual, share)
    if not ha:
        return float("nan")
    return len(ha & hot_items(sampled, share)) / len(ha)


# -----------------------------------------------------------------------------------------
# Checks
# -----------------------------------------------------------------------------------------
class Checks:
    """The failed checks of a test runner (thread-safe): checks(name, cond, detail) records
    a failure when [cond] is false and returns [cond]; finish(summary) prints each failure
    and a last line, and returns the exit status."""

    def __init__(self):
        self.failures = []
        self.counts = collections.Counter()   # "checks", and what else a runner counts (bump)
        self._lock = threading.Lock()

    def __call__(self, name, cond, detail=""):
        with self._lock:
            self.counts["checks"] += 1
            if not cond:
                self.failures.append(f"{name}: {detail}")
        return cond

    def bump(self, what):
        with self._lock:
            self.counts[what] += 1

    def finish(self, summary):
        for f in self.failures:
            print("FAIL", f)
        print(f"{'FAILED' if self.failures else 'ok'}: {summary}; {len(self.failures)} failure(s)")
        return 1 if self.failures else 0

    def run_tasks(self, tasks, jobs):
        """Run the callables [tasks] on [jobs] threads; an exception in one is a failed
        check (with its traceback), not the end of the run."""
        import concurrent.futures
        import traceback

        def guarded(t):
            try:
                t()
            except Exception as e:
                self("test code", False, f"{e!r}\n{traceback.format_exc()}")

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            list(ex.map(guarded, tasks))
