"""One timed run of tandem: the process, the placement probes around it, its -Xstats counters.

Everything here is about measuring a single configuration once; which configurations run, in
what order, lives in experiments.py and run.py.
"""
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import time

# -Xstats lines (vm_main / cab): the totals of all CABs and each analyzer's idle time.
RE_TOTAL = re.compile(r"cab total: produced (\d+) consumed (\d+) dropped (\d+) chunks (\d+) "
                      r"blocks (\d+) blocked ([0-9.]+) ms")
RE_IDLE = re.compile(r"analyzer (\d+) idle ([0-9.]+) ms")
RE_TOPOLOGY = re.compile(r"\[stats\] topology: (.*)")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stable_copy(src, dst_dir, check_args, wait_s=900):
    """Copy the executable [src] into [dst_dir] once it is complete, and return the copy.

    Others rebuild build/ while the evaluation runs; a private copy taken once means every run
    of one evaluation uses the same binary, and a rebuild in the middle cannot make a run fail
    or mix two builds. "Complete" = executable, non-empty, unchanged for 2 s, and it runs."""
    deadline = time.time() + wait_s
    dst = os.path.join(dst_dir, os.path.basename(src))
    while True:
        try:
            st = os.stat(src)
            if st.st_size > 0 and os.access(src, os.X_OK):
                time.sleep(2)
                st2 = os.stat(src)
                if (st2.st_size, st2.st_mtime) == (st.st_size, st.st_mtime):
                    shutil.copy2(src, dst)
                    p = subprocess.run([dst] + check_args, capture_output=True, timeout=60)
                    if p.returncode == 0:
                        return dst
        except (OSError, subprocess.TimeoutExpired):
            pass
        if time.time() > deadline:
            sys.exit("eval: %s is missing or does not run (waited %d s)" % (src, wait_s))
        print("eval: waiting for %s (being rebuilt?)" % src, file=sys.stderr, flush=True)
        time.sleep(5)


def probe(cab_bench):
    """(round-trip ns, placement class) of the two CPUs right now (cab_bench -P)."""
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


def parse_stats(stderr):
    """The -Xstats counters a run printed: totals over its CABs, analyzer idle time."""
    s = {}
    m = None
    for m in RE_TOTAL.finditer(stderr):
        pass
    if m:
        s.update(produced=int(m.group(1)), consumed=int(m.group(2)), dropped=int(m.group(3)),
                 chunks=int(m.group(4)), blocks=int(m.group(5)), blocked_ms=float(m.group(6)))
    # each CAB line repeats its analyzer's idle time as of when it was printed: keep the
    # largest per analyzer, then add the analyzers up
    idle = {}
    for m in RE_IDLE.finditer(stderr):
        idle[m.group(1)] = max(idle.get(m.group(1), 0.0), float(m.group(2)))
    if idle:
        s["analyzer_idle_ms"] = sum(idle.values())
        s["analyzers"] = len(idle)
    return s


RE_APP_CPUS = re.compile(r"placement: application threads on CPU\(s\) ([0-9,-]+)")


def app_cpus(tandem):
    """The CPUs tandem gives the application when an analyzer thread is present (-Xaffinity=auto)."""
    p = subprocess.run([tandem, "-Xstats", "-Xprofile=methodcount", "-Xprofile.out=/dev/null", "-e", "local x = 1"],
                       capture_output=True, text=True)
    m = RE_APP_CPUS.search(p.stderr)
    return m.group(1) if m else None


def topology(tandem):
    p = subprocess.run([tandem, "-Xstats", "-e", "local x = 1"], capture_output=True, text=True)
    m = RE_TOPOLOGY.search(p.stderr)
    return m.group(1) if m else "unknown"


def run_once(tandem, cab_bench, args, prog, scale, timeout=300, pin=None):
    """Run `tandem ARGS -Xstats PROG SCALE` once, framed by a probe on each side.

    Returns a dict: seconds (wall clock of the process), rc, stats, the probes and the
    placement class (the probes' class when both agree, else "moved"). The probes are cheap
    (~15 ms) and every run gets them, so even uninstrumented and sequential runs say where
    the two vCPUs were (multi-threaded programs use both cores too). [pin]: a CPU list to start
    the process on with taskset (for runs without an analyzer thread, see run.py)."""
    cmd = ([("taskset"), "-c", pin] if pin else []) + [tandem] + args + ["-Xstats", prog, str(scale)]
    p0 = probe(cab_bench)
    with open("/proc/loadavg") as f:
        load1 = float(f.read().split()[0])
    # CPU time of the run (all its threads): the children's rusage grows by exactly this run
    # between the two calls, since the probes are waited for outside the window
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = -999, "timeout after %d s" % timeout
    t = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p1 = probe(cab_bench)
    r = {"seconds": t, "rc": rc, "cmd": " ".join(cmd), "load1": load1,
         "cpu_s": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime),
         "probe_before_ns": p0[0], "probe_before": p0[1],
         "probe_after_ns": p1[0], "probe_after": p1[1],
         "placement": p0[1] if p0[1] == p1[1] else "moved"}
    r.update(parse_stats(err))
    if rc != 0:
        # keep the end of stderr without the [stats] noise: that is what says why it failed
        lines = [l for l in err.splitlines() if not l.startswith("[stats]")]
        r["error"] = " | ".join(lines[-4:])[-300:]
    return r
