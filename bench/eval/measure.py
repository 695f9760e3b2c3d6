"""One timed run of tandem: the process, the placement probes around it, its -Xstats counters.

Everything here is about measuring a single configuration once; which configurations run, in
what order, lives in experiments.py and run.py.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

import tandem_harness as th


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


def app_cpus(tandem):
    """The CPUs tandem gives the application when an analyzer thread is present (-Xaffinity=auto)."""
    p = subprocess.run([tandem, "-Xstats", "-Xprofile=methodcount", "-Xprofile.out=/dev/null", "-e", "local x = 1"],
                       capture_output=True, text=True)
    return th.parse_stats(p.stderr).app_cpus


def topology(tandem):
    p = subprocess.run([tandem, "-Xstats", "-e", "local x = 1"], capture_output=True, text=True)
    return th.parse_stats(p.stderr).topology or "unknown"


ANALYSED = ("analyzer_chunks", "analyzer_busy_ms", "self_chunks", "self_ms")   # -Xcab.full: who analysed


SHADOW_RE = re.compile(r"\[stats\] shadow: .*?forked (\d+), analysed (\d+) .*?; mean life ([0-9.]+) ms")
SHADOW_WAITS_RE = re.compile(r"the program's time in forks ([0-9.]+) ms .*?waiting for the last shadows at its end ([0-9.]+) ms")
SHADOW_WINDOWS_RE = re.compile(r"\[stats\] shadow windows: \w+; window ticks in compiled code (\d+), interpreted (\d+);"
                               r" the analysed shadows' CPU time ([0-9.]+) ms \(([0-9.]+) ns a tick")


def shadow_stats(err, seconds):
    """Shadow profiling's -Xstats (vm/prof/vm_shadow.c): forks, shadows analysed, their summed
    lives (fork to reap, seconds) and that as a share of the run's wall time (the average number
    of live shadows), the share of their window ticks run in compiled code, and their CPU time
    (what they took of the other core, whatever the load) a tick covered, and the program's
    wall time in forks and in its wait for the last shadows at its end, as shares of the run's
    wall time; {} without shadows."""
    m, w, t = SHADOW_RE.search(err), SHADOW_WINDOWS_RE.search(err), SHADOW_WAITS_RE.search(err)
    if not m:
        return {}
    live = int(m.group(2)) * float(m.group(3)) / 1e3
    out = {"shadow_forks": int(m.group(1)), "shadow_analysed": int(m.group(2)), "shadow_live_s": live,
           "shadow_live_share": live / seconds if seconds else None}
    if t and seconds:
        out["shadow_fork_share"] = float(t.group(1)) / 1e3 / seconds
        out["shadow_end_share"] = float(t.group(2)) / 1e3 / seconds
    if w and int(w.group(1)) + int(w.group(2)):
        out["shadow_compiled"] = int(w.group(1)) / (int(w.group(1)) + int(w.group(2)))
        out["shadow_ns_tick"] = float(w.group(4))
    return out


def run(tandem, cab_bench, args, prog, scale, timeout=300, pin=None, extra=()):
    """Run `tandem ARGS -Xstats PROG SCALE EXTRA...` once, framed by a probe on each side.

    Returns a dict: seconds (wall clock of the process), rc, stats, the probes and the
    placement class (the probes' class when both agree, else "moved"). The probes are cheap
    (~15 ms) and every run gets them, so even uninstrumented and sequential runs say where
    the two vCPUs were (multi-threaded programs use both cores too). [pin]: a CPU list to start
    the process on with taskset (for runs without an analyzer thread, see run.py). [extra]: the
    program's arguments after the scale (its thread count)."""
    cmd = ([("taskset"), "-c", pin] if pin else []) + [tandem] + args + ["-Xstats", prog, str(scale)] + list(extra)
    p0 = th.probe(cab_bench)
    with open("/proc/loadavg") as f:
        load1 = float(f.read().split()[0])
    r = th.run_once(cmd, timeout=timeout)
    rc, err = (-999, "timeout after %d s" % timeout) if r.timed_out else (r.code, r.err)
    p1 = th.probe(cab_bench)
    res = {"seconds": r.seconds, "rc": rc, "cmd": " ".join(cmd), "load1": load1, "cpu_s": r.cpu_s,
           "probe_before_ns": p0[0], "probe_before": p0[1],
           "probe_after_ns": p1[0], "probe_after": p1[1],
           "placement": p0[1] if p0[1] == p1[1] else "moved"}
    st = th.parse_stats(err)
    res.update(st.counters())
    if st.total:
        res.update({k: st.total[k] for k in ANALYSED})
    res.update(shadow_stats(err, r.seconds))
    if rc != 0:
        # keep the end of stderr without the [stats] noise: that is what says why it failed
        lines = [l for l in err.splitlines() if not l.startswith("[stats]")]
        res["error"] = " | ".join(lines[-4:])[-300:]
    return res
