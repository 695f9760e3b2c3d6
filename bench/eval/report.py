"""report.md (and the plots, targets.csv, costmodel.csv) from an evaluation folder's CSVs."""
import csv
import json
import math
import os

import analyze as an
import experiments as ex
import plot

EXPS = ["fig7", "fig8", "fig9", "fig10", "fig11", "always", "shadow", "full"]


def cell(span):
    """'median% [min, max]' of a ratio span, as overheads."""
    m, lo, hi, n = span
    if m is None:
        return "–"
    return "%.1f%% [%.1f, %.1f]" % (100 * (m - 1), 100 * (lo - 1), 100 * (hi - 1))


def p(x):
    return an.pct(x)


def base_spread(data):
    """"fig7 1.12x, fig8 1.60x, ...": per experiment, the median over programs (and base
    configurations) of the slowest over the fastest uninstrumented run."""
    out = []
    for name in EXPS:
        rows = data.get(name)
        if not rows:
            continue
        cells = an.Cells(rows)
        sp = [max(v) / min(v) for v in (cells.vals(prog, b, "seconds") for prog in an.programs(rows)
                                        for b in an.base_configs(rows)) if v]
        if sp:
            out.append("%s %.2fx" % (name, an.med(sp)))
    return ", ".join(out) or "n/a"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def img(name):
    return "![%s](plots/%s.png) ([SVG](plots/%s.svg))\n" % (name, name, name)


def placement_section(data):
    classes = []
    for rows in data.values():
        for c, _ in an.placement_counts(rows).most_common():
            if c not in classes:
                classes.append(c)
    rows = []
    for e in EXPS:
        if data.get(e):
            cnt = an.placement_counts(data[e])
            rows.append([e] + [cnt.get(c, 0) for c in classes] + [sum(cnt.values())])
    return ("Runs per placement class (probe before and after each run; \"moved\" = the two probes "
            "disagree):\n\n" + table(["experiment"] + classes + ["total"], rows))


def fig7_section(rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    cfgs = ["%s/%s" % (a, b) for a in ("callgraph", "pathprof") for b in ("cab", "nway", "ffwd")]
    head = ["program"] + cfgs
    body = [[pr] + [cell(cells.span(pr, c)) for c in cfgs] for pr in progs]
    body.append(["**geomean**"] + [p(an.ovh(cells.gm(progs, c))) for c in cfgs])
    norm = []
    for a in ("callgraph", "pathprof"):
        cab = cells.gm(progs, a + "/cab")
        norm.append([a] + ["%.3f" % (cells.gm(progs, "%s/%s" % (a, b)) / cab) if cab else "–"
                           for b in ("cab", "nway", "ffwd")])
    bp = an.by_placement(rows, cfgs, progs)
    pl = [[pl, n] + ["%s (%d)" % (p(an.ovh(v[c][0])), v[c][1]) for c in cfgs] for pl, n, v in bp]
    return ("Overhead over the uninstrumented run, median over rounds [min, max]:\n\n" + table(head, body) +
            "\nTime normalized to CAB's (the paper's Fig. 7 axis), geometric mean over programs:\n\n" +
            table(["analysis", "CAB", "N-way", "FastForward"], norm) +
            "\nWithin one placement class (geomean over the programs having runs of every configuration in "
            "that class; runs in parentheses):\n\n" + table(["placement", "programs"] + cfgs, pl) + "\n" + img("fig7"))


def breakdown_section(rows, name):
    cells, progs = an.Cells(rows), an.programs(rows)
    head = ["analysis", "instrument", "enqueue", "communicate", "concurrent", "sequential", "conc/seq overhead"]
    body = []
    for a in an.ANALYSES:
        v = [an.ovh(cells.gm(progs, "%s/%s" % (a, s))) for s in an.STAGES]
        # the ratio means nothing when the sequential overhead is within noise of zero
        body.append([a] + [p(x) for x in v] + ["%.2f" % (v[3] / v[4]) if v[3] is not None and v[4] and v[4] > 0.02
                                               else "–"])
    cfgs = ["%s/%s" % (a, s) for a in an.ANALYSES for s in ("full", "sequential")]
    bp = an.by_placement(rows, cfgs, progs)
    pl = []
    for plc, n, v in bp:
        pl.append([plc, n] + ["%s / %s" % (p(an.ovh(v[a + "/full"][0])), p(an.ovh(v[a + "/sequential"][0])))
                              for a in an.ANALYSES])
    out = ("Overhead over the uninstrumented run (geometric mean over %d programs of the per-program "
           "medians; %s):\n\n" % (len(progs), ", ".join(progs)) + table(head, body) +
           "\nConcurrent / sequential overhead within one placement class:\n\n" +
           table(["placement", "programs"] + an.ANALYSES, pl) + "\n" + img(name))
    return out


def breakdown_detail(rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    out = ""
    for a in an.ANALYSES:
        body = [[pr] + [cell(cells.span(pr, "%s/%s" % (a, s))) for s in an.STAGES] +
                ["%.3f" % cells.med(pr, "base", "seconds") if cells.med(pr, "base", "seconds") else "–"]
                for pr in progs]
        out += "\n**%s**\n\n" % a + table(["program", "instrument", "enqueue", "communicate", "concurrent",
                                             "sequential", "base s"], body)
    return out


def fig10_section(rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    sizes = sorted({int(r["ring_kb"]) for r in rows if r["ring_kb"] is not None})
    chunk = {int(r["ring_kb"]): int(r["chunk_kb"]) for r in rows if r["ring_kb"] is not None}
    head = ["ring", "chunk"] + ["%s overhead" % pr for pr in progs] + ["%s blocked ms" % pr for pr in progs]
    body = []
    for s in sizes:
        c = "pathprof/%dk" % s
        bl = []
        for pr in progs:
            v = cells.vals(pr, c, "blocked_ms")
            bl.append("%.1f [%.1f, %.1f]" % (an.med(v), min(v), max(v)) if v else "–")
        body.append(["%d KB" % s, "%d KB" % chunk[s]] + [cell(cells.span(pr, c)) for pr in progs] + bl)
    return ("pathprof, concurrent exhaustive CAB; blocked = the sum over the CABs of the time producers "
            "spent blocked on a full ring (-Xstats), median [min, max]:\n\n" + table(head, body) + "\n" + img("fig10"))


def fig11_section(rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    rates = sorted({r["rate"] for r in rows if isinstance(r["rate"], float)})
    out = ""
    for a in ("callgraph", "pathprof"):
        body = []
        for rate in rates + ["exhaustive"]:
            c = "%s/%s" % (a, rate if rate == "exhaustive" else "%g" % rate)
            if not any(r["config"] == c for r in rows):
                continue
            ea = [cells.med(pr, c, "error_all") for pr in progs]
            eh = [cells.med(pr, c, "error_hot") for pr in progs]
            ea = [e for e in ea if e is not None]
            eh = [e for e in eh if e is not None and not math.isnan(e)]
            dropped = [cells.med(pr, c, "dropped") for pr in progs]
            prod = [cells.med(pr, c, "produced") for pr in progs]
            kept = sum(pr - d for pr, d in zip(prod, dropped) if pr and d is not None) / max(1, sum(x for x in prod if x))
            body.append(["%g%%" % (100 * rate) if rate != "exhaustive" else "exhaustive",
                         p(an.ovh(cells.gm(progs, c))),
                         " ".join(cell(cells.span(pr, c)).split(" [")[0] for pr in progs),
                         p(sum(ea) / len(ea)) if ea else "–", p(sum(eh) / len(eh)) if eh else "–",
                         "%.1f%%" % (100 * kept)])
        out += "\n**%s** (programs: %s)\n\n" % (a, ", ".join(progs)) + table(
            ["rate", "overhead (geomean)", "per program", "error, all items", "error, items seen >= 100 x",
             "events analysed"], body)
    code = code_sampling_table(rows, cells, progs, rates)
    return ("Error = the paper's error rate (prof_error.py) of each run's sampled profile against the exhaustive "
            "profile of the same program, mean over programs of the per-program medians; \"all items\" is the "
            "paper's definition, \"seen >= 100 x\" keeps the items counted at least 100/rate times exhaustively "
            "(bench/analyses.py explains why). Events analysed = consumed / produced (-Xstats).\n" + out + code + "\n"
            + img("fig11"))


def code_sampling_table(rows, cells, progs, rates):
    """Sampled instrumentation (-Xsample.mode=code) beside the CAB's sampling (-Xsample.mode=events)
    at every rate: overhead (geomean) of each, and the code form's errors (the paper's,
    weighted, hot-item overlap). Empty for runs without the code form."""
    out = ""
    for a in ("callgraph", "calltree", "pathprof"):
        if not any(r["config"].startswith(a + "/code/") for r in rows):
            continue
        body = []
        for rate in rates + ["exhaustive"]:
            ev = "%s/%s" % (a, rate if rate == "exhaustive" else "%g" % rate)
            c = ev if rate == "exhaustive" else "%s/code/%g" % (a, rate)
            body.append(["%g%%" % (100 * rate) if rate != "exhaustive" else "exhaustive",
                         p(an.ovh(cells.gm(progs, ev))) if any(r["config"] == ev for r in rows) else "–",
                         p(an.ovh(cells.gm(progs, c))),
                         " ".join(cell(cells.span(pr, c)).split(" [")[0] for pr in progs),
                         p(an.mean_of(cells, progs, c, "error_all")), p(an.mean_of(cells, progs, c, "error_weighted")),
                         p(an.mean_of(cells, progs, c, "hot_overlap"))])
        out += "\n**%s, sampled code** (programs: %s)\n\n" % (a, ", ".join(progs)) + table(
            ["rate", "overhead, events (CAB)", "overhead, code", "per program (code)", "error (paper)",
             "weighted error", "hot-item overlap"], body)
    if out:
        out = ("\nSampled instrumentation (-Xsample.mode=code, seed %d): between windows the program runs "
               "uninstrumented code; errors of the code form against the exhaustive profile: the paper's, "
               "the weighted error (sum |actual - estimate| / sum actual) and the hot-item overlap (of the items "
               "making up 90%% of the exhaustive profile, the share the sample ranks in its own top 90%%).\n"
               % ex.CODE_SEED) + out
    return out


def shadow_section(rows):
    """Shadow profiling (issue 20): per analysis, each <length, load> of the grid, its windows
    compiled and interpreted, with its overhead (geomean of the per-program medians, and per
    program), coverage, the shadows' live share of the run and coverage per live share (what a
    shadow's time on the other core buys), weighted error and hot-item overlap, and the exhaustive
    concurrent run beside them (the paper's Fig. 3 and 5 as one table)."""
    cells, progs = an.Cells(rows), an.programs(rows)
    f1 = lambda x: "–" if x is None else "%.0f" % x  # noqa: E731
    grid = sorted({(int(r["length"]), r["load"]) for r in rows if r["form"] == "shadow"})
    wins = [w for w in ex.SHADOW_WINDOWS if any(r.get("windows") == w for r in rows)] or ["compiled"]
    out = ""
    for a in ex.SHADOW_ANALYSES:
        body = []
        confs = [(an.shadow_key(a, n, ld, w), "%d ticks, load %g, %s%s" % (
            n, ld, w, " (default)" if (n, ld, w) == an.SHADOW_DEFAULT + ("compiled",)
            else " (first default)" if (n, ld) == an.SHADOW_PREVIOUS and w == "compiled" else ""))
            for n, ld in grid for w in wins]
        for c, label in confs + [(a + "/exhaustive", "exhaustive concurrent")]:
            if not any(r["config"] == c for r in rows):
                continue
            shadow = c != a + "/exhaustive"
            m = lambda col: p(an.mean_of(cells, progs, c, col)) if shadow else "–"  # noqa: E731
            cpl = an.mean_of(cells, progs, c, "coverage_per_live") if shadow else None
            body.append([label, p(an.ovh(cells.gm(progs, c))),
                         " ".join(cell(cells.span(pr, c)).split(" [")[0] for pr in progs),
                         m("coverage") if shadow else "100%", m("shadow_live_share"),
                         "–" if cpl is None else "%.2f" % cpl, f1(an.mean_of(cells, progs, c, "shadow_ns_tick")) if shadow else "–",
                         m("error_weighted"), m("hot_overlap")])
        out += "\n**%s** (programs: %s)\n\n" % (a, ", ".join(progs)) + table(
            ["configuration", "overhead (geomean)", "per program", "coverage", "shadows live",
             "coverage per live", "shadow CPU ns a tick", "weighted error", "hot-item overlap"], body)
    return ("The program runs uninstrumented and forks shadows that run instrumented for a sample length (ticks) "
            "on the analyzer core, as many alive on average as the load; their windows run the instrumented twins "
            "of compiled code (compiled) or the instrumented interpreter (interpreted, -Xsample.windows); "
            "coverage = ticks the analysed shadows ran / ticks of the program (the report's scale); shadows live = "
            "the analysed shadows' summed lives (fork to reap) / the run's wall time; coverage per live = the two's "
            "ratio, the coverage a shadow-second buys; shadow CPU ns a tick = the analysed shadows' CPU time (user and "
            "system, what they took of the other core whatever the machine's load) / the ticks they covered; errors against the exhaustive profile of the same program "
            "(prof_error.py's weighted error and hot-item overlap), mean over programs of the per-program medians.\n"
            + out)


def full_section(rows):
    per = an.full_ring(rows)
    f = lambda x: "–" if x is None else "%.2f" % x  # noqa: E731

    def slow(span):
        m, lo, hi, n = span
        return "–" if m is None else "%.2fx [%.2f, %.2f]" % (m, lo, hi)

    def chunks(t, pol):
        s, a = t[pol + "_self_chunks"], t[pol + "_analyzer_chunks"]
        if s is None or a is None:
            return "–"
        return "%d / %d (%.0f%%)" % (s, a, 100.0 * s / (s + a)) if s + a else "0 / 0"
    out = []
    for aff in sorted({t["affinity"] for t in per}, key=lambda x: (x != "none", x)):
        ts = [t for t in per if t["affinity"] == aff]
        body = [[t["program"], t["analysis"], f(t["base_s"]), slow(t["block"]), slow(t["self"]), slow(t["adaptive"]),
                 f(t["block_over_adaptive"]), f(t["self_over_adaptive"]), f(t["block_headroom"]),
                 chunks(t, "block"), chunks(t, "self"), chunks(t, "adaptive")] for t in ts]
        for a in an.FULL_ANALYSES:
            ta = [t for t in ts if t["analysis"] == a]
            if ta:
                body.append(["**geomean**", a, "", ] + [f(an.gmean([t[pol][0] for t in ta])) + "x"
                                                        for pol in an.POLICIES] +
                            [f(an.gmean([t[k] for t in ta])) for k in ("block_over_adaptive", "self_over_adaptive",
                                                                      "block_headroom")] +
                            ["", "", ""])
        out.append("\n**-Xaffinity=%s**%s\n\n" % (aff, {
            "none": " (the paper's setting: program threads and the analyzer share both cores)",
            "auto": " (tandem's default: the analyzer on a core of its own, the program threads on the other)"}.get(aff, "")) +
            table(["program@threads", "analysis", "base s", "thread pool (block)", "synchronous (self)", "adaptive",
                   "block / adaptive", "self / adaptive", "block's headroom", "chunks, program / analyzer: block", "self",
                   "adaptive"], body))
    return ("""The deferred-methods paper (section 4) processes full buffers synchronously (the producer
itself), in a thread pool (dedicated consumers; a producer waits when they fall behind) or
adaptively (the producer processes its own buffer only when the consumers cannot keep up). On
Tandem these are `-Xcab.full=self`, `block` (the analyzer threads are the pool) and `adaptive` (a
program thread analyses its own full ring when the analyzer is not at it and no CPU is idle).
Concurrent exhaustive cachesim and pathprof, native threads, programs run with more worker threads
than the machine has cores (`NAME@N`: N workers). Slowdown = time over the uninstrumented run of the
same program, placement and round, median [min, max] over the rounds; block / adaptive and self /
adaptive are ratios of the median slowdowns (above 1: adaptive is faster). Chunks: analysed by the
program threads / by the analyzer thread (-Xstats, medians over the rounds). Under
-Xaffinity=none the uninstrumented run is not pinned: the program has both cores, as in its
analysed runs; under auto it is pinned to the application's CPU, as in Fig. 8. Block's headroom =
its wall time over its CPU time (user + system, every thread) divided by the machine's CPUs,
median over the rounds: the most any policy doing the same work could gain over block. Adaptive
can only beat block by what block leaves idle (program threads waiting on an analyzer that is not
running); where the headroom is below 1.5, a 1.5x gain is out of reach on this machine.
""" + "".join(out) + "\n" + img("full"))


def cost_section(per, agg):
    head = ["analysis", "A (s)", "A_i", "A_q", "P_c", "P (+I_ap)", "P_iso", "I_ap", "E_c^A", "E_c^P",
            "E_c predicted", "E_c measured", "error", "worst program", "dominant", "E_s measured",
            "variant: P_c on the app", "blocked ms (full)"]
    f = lambda x: "–" if x is None else "%.3f" % x  # noqa: E731
    body = [[m["analysis"], f(m["A_s"]), f(m["A_i"]), f(m["A_q"]), f(m["P_c"]), f(m["P"]), f(m["P_iso"]),
             f(m["I_ap"]), f(m["Ec_A"]), f(m["Ec_P"]), f(m["Ec_pred"]), f(m["Ec_meas"]),
             "%+.1f%%" % (100 * m["err"]), "%+.1f%% (%d/%d within 15%%)" % (100 * m["worst_err"], m["within15"], m["programs"]),
             m["dominant"], f(m["Es"]), "%s (%+.1f%%)" % (f(m["Ec_pred_app"]), 100 * m["err_app"]),
             "%.1f" % m["blocked_ms"] if m["blocked_ms"] is not None else "–"] for m in agg]
    detail = [[t["analysis"], t["program"], f(t["A_i"]), f(t["A_q"]), f(t["P_c"]), f(t["P"]), f(t["P_iso"]),
               f(t["Ec_pred"]), f(t["Ec_meas"]), "%+.1f%%" % (100 * t["err"])] for t in per]
    return ("""The terms of section 4, estimated from Fig. 8's stages (native threads) in units of A, the
uninstrumented time (A itself in seconds, mean over programs); every term is the mean over the programs
of the per-program medians:

- A_i = instrument − A; A_q = enqueue − instrument; P_c = communicate − enqueue (what communication adds
  to the run: the analyzer dequeues without analysing, so the cost shows as the producer's cache misses
  on lines the analyzer cleared, and as the analyzer's dequeue time only if it would dominate);
- P = sequential − instrument: the analysis done inline. This includes I_ap, since sequential runs
  E_s = A + A_i + P + I_ap, so E_s is reproduced by construction and is shown measured.
- I_ap is separated with the analyzer's own clock: -Xstats gives each analyzer's idle time, so its busy
  time is wall − idle; P_iso = busy(full) − busy(communicate) is the analysis work on its own core (the
  isolated analyzer), and I_ap = P − P_iso (negative when inline analysis is cheaper than the same work
  on a core fed from another core's cache).
- Prediction: E_c = max(E_c^A, E_c^P) with E_c^A = A + A_i + A_q and E_c^P = P + P_c; compared with the
  measured concurrent (full stage) time.

""" + table(head, body) + "\nPer program:\n\n" +
            table(["analysis", "program", "A_i", "A_q", "P_c", "P", "P_iso", "E_c pred", "E_c meas", "error"], detail) +
            "\n" + cost_explanation(agg) + "\n" + img("costmodel"))


def cost_explanation(agg):
    """Where the model misses, said with this run's numbers."""
    bad = [m for m in agg if abs(m["err"]) > 0.15]
    if not bad:
        return "The prediction is within 15% of the measured concurrent time for every analysis.\n"
    out = ["**Where the model misses** (%s):\n" % ", ".join(m["analysis"] for m in bad)]
    under = [m for m in bad if m["err"] < 0]
    if under:
        out.append("- Under-predicted (%s): the application side dominates in the model (E_c^A >= E_c^P) and the "
                   "measured time exceeds it. The communicate stage alone already takes %s A: draining the ring "
                   "from another core slows the *application* (the producer's stores miss on lines the analyzer "
                   "read and cleared, and the analyzer's wake-ups compete with other work on the second vCPU), "
                   "a cost the model books only on the analyzer's side (P_c in E_c^P). Charging it to the "
                   "application (the variant column) gives errors of %s.\n" % (
                       ", ".join(m["analysis"] for m in under),
                       ", ".join("%.2f (%s)" % (m["r_comm"], m["analysis"]) for m in under),
                       ", ".join("%+.1f%% (%s)" % (100 * m["err_app"], m["analysis"]) for m in under)))
        rest = [m for m in under if m["err_app"] < -0.15]
        if rest:
            out.append("- What remains (%s) is the analysis itself running next to the application: the full stage "
                       "is slower than the communicate stage by more than the model allows, through producer "
                       "blocking when the analyzer falls behind in bursts (blocked ms column; the model assumes one "
                       "side dominates uniformly) and through shared-L3 and memory-bandwidth interference that a "
                       "sequential run does not have.\n" % ", ".join(m["analysis"] for m in rest))
    over = [m for m in bad if m["err"] > 0]
    if over:
        out.append("- Over-predicted (%s): P = sequential - instrument includes I_ap (the inline analysis's own "
                   "interference with the application), which does not exist when the analysis runs on the other "
                   "core; where P dominates, the prediction is too high by about I_ap.\n"
                   % ", ".join(m["analysis"] for m in over))
    out.append("- Noise: the terms are differences of medians of runs that each vary by several percent here; a term "
               "smaller than ~0.03 A is within noise (negative A_i or A_q are that).\n")
    return "".join(out)


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for r in rows:
            w.writerow([("%.6g" % r[k]) if isinstance(r.get(k), float) else r.get(k, "") for k in fields])


def write(folder):
    meta = {}
    if os.path.exists(os.path.join(folder, "meta.json")):
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
    data = {e: an.load(folder, e) for e in EXPS}
    data = {e: r for e, r in data.items() if r}
    per, agg = an.cost_model(data["fig8"]) if data.get("fig8") else ([], [])
    if per:
        write_csv(os.path.join(folder, "costmodel.csv"), per + [dict(m, program="(mean)") for m in agg],
                  ["analysis", "program", "A_s", "A_i", "A_q", "P_c", "P", "P_iso", "I_ap", "Ec_A", "Ec_P",
                   "Ec_pred", "Ec_meas", "err", "Es"])
    tg = an.targets(data)
    write_csv(os.path.join(folder, "targets.csv"), [{"target": t, "measured": m, "verdict": v} for t, m, v in tg],
              ["target", "measured", "verdict"])
    made = plot.all_plots(folder, data, agg)

    md = ["# Tandem: the CAB paper's evaluation (sections 4 and 6)\n"]
    factor = meta.get("scale_factor", 1.0)
    md.append("- command: `%s` (%s mode%s, %s rounds per experiment), started %s UTC, measured in %.1f min\n" %
              (meta.get("command", "?"), meta.get("mode", "?"),
               ", every scale x%g" % factor if factor != 1.0 else "", meta.get("runs", "?"),
               meta.get("started_utc", "?"), meta.get("seconds", 0) / 60))
    md.append("- commit: `%s` (%s)%s\n" % (meta.get("git_commit", "?"), meta.get("git_subject", ""),
                                           "; %d tracked files modified in the work tree" % meta["git_dirty_files"]
                                           if meta.get("git_dirty_files") else ""))
    md.append("- binary: build/tandem of %s UTC, sha256 `%s…` (a private copy for the whole run)%s\n" %
              (meta.get("tandem_mtime", "?"), meta.get("tandem_sha256", "?")[:16],
               "; build/tandem was rebuilt during the run (the copy was used throughout)" if meta.get("build_changed") else ""))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shown = os.path.abspath(folder)
    if shown.startswith(root + os.sep):
        shown = os.path.relpath(shown, root)
    md.append("- regenerate the report and plots from these CSVs: `python3 bench/eval/run.py --report-only %s`\n" % shown)
    loads = [float(x) for x in meta.get("loadavg_start", [])[:1] + meta.get("loadavg_end", [])[:1]]
    if loads and max(loads) > 1.5:
        # two vCPUs: a load above ~1.5 means other work competed for the cores during the run
        md.append("- **warning**: load average %s at start/end on 2 vCPUs — other work competed for the cores; "
                  "concurrent runs (two busy threads) suffer more from that than sequential ones, so treat "
                  "the concurrent-vs-sequential figures as an upper bound (per-run `load1` and `cpu_s` are in the CSVs)\n"
                  % " / ".join("%.1f" % x for x in loads))
    md.append("\n## Machine\n\n```\n%s\n%s\ntopology (tandem -Xstats): %s\nload average at start %s, at end %s\n```\n" %
              (meta.get("uname", ""), meta.get("lscpu", ""), meta.get("topology", ""),
               " ".join(meta.get("loadavg_start", [])), " ".join(meta.get("loadavg_end", []))))
    md.append("\nhwloc:\n\n```\n%s\n```\n" % meta.get("hwloc", ""))
    md.append(("""
## Method

Programs from bench/suite at the scales in the CSVs (`scale` column). Each experiment runs in rounds; in
a round every program runs the uninstrumented configuration and each other configuration once, in an
order shuffled per round (interleaved, never in blocks). A run's ratio is its wall-clock time over
the uninstrumented run of the same program in the same round; tables give the median over the rounds
with [min, max], and geometric means over programs of those medians. Every run is framed by a
cache-line round-trip probe (`cab_bench -P`) and gets the probes' placement class, or "moved" when
they disagree; concurrent configurations are also compared within one placement class. Runs without an
analyzer thread (uninstrumented, sequential) are started with `taskset` on the CPU tandem gives the
application when an analyzer is present (CPU %s), and green threads run on one carrier (`-Xcarriers=1`)
in every configuration: every configuration of a program then has the same one core for the
application, so a multi-threaded program's overheads measure the analysis, not a core taken away.
The machine is shared with other work: absolute times move, ratios within a round much less.

""") % meta.get("app_cpus", "0"))
    md.append(placement_section(data))
    md.append("\n## Summary: the issue's targets\n\n")
    md.append("Verdicts are on the medians. \"Fastest runs\" gives the same overheads from each "
              "configuration's fastest run over its fastest uninstrumented run: other tenants of the host "
              "only ever slow a run down, so where the two disagree the verdict is within that noise. "
              "How much noise there was, as the slowest over the fastest uninstrumented run of a program "
              "(median over the programs): %s.\n\n" % base_spread(data))
    md.append(table(["target", "measured", "verdict"], tg))
    if os.path.exists(os.path.join(folder, "plots", "summary.png")):
        md.append("\n" + img("summary"))
    if data.get("fig7"):
        md.append("\n## Fig. 7: CAB vs N-way buffering vs FastForward\n\n" + fig7_section(data["fig7"]))
    for e, t in (("fig8", "native"), ("fig9", "green")):
        if data.get(e):
            md.append("\n## Fig. %s: exhaustive overhead breakdown, %s threads\n\n" % (e[3:], t) +
                      breakdown_section(data[e], e))
    if data.get("fig10"):
        md.append("\n## Fig. 10: pathprof against the ring size\n\n" + fig10_section(data["fig10"]))
    if data.get("fig11"):
        md.append("\n## Fig. 11: sampling overhead and error against the rate\n\n" + fig11_section(data["fig11"]))
    if data.get("always"):
        cells, progs = an.Cells(data["always"]), an.programs(data["always"])
        md.append("\n## The always-on preset (-Xprofile.always)\n\ncallgraph and calltree by sampled code at 0.2%, "
                  "adaptive; overhead over no profiling, median [min, max] of the interleaved runs:\n\n" +
                  table(["program", "overhead"], [[pr, cell(cells.span(pr, "always"))] for pr in progs]) +
                  "\ngeomean: %s\n" % p(an.ovh(cells.gm(progs, "always"))))
    if data.get("shadow"):
        md.append("\n## Shadow profiling: overhead and accuracy against sample length and load\n\n" +
                  shadow_section(data["shadow"]))
    if agg:
        md.append("\n## Cost model (section 4)\n\n" + cost_section(per, agg))
    if data.get("full"):
        md.append("\n## The deferred-methods paper's comparison: synchronous / thread pool / adaptive\n\n" +
                  full_section(data["full"]))
    failed = [r for rows in data.values() for r in rows if r["rc"] != 0]
    md.append("\n## Failed runs\n\n")
    md.append(table(["experiment", "program", "config", "rc", "stderr"],
                    [[r["experiment"], r["program"], r["config"], int(r["rc"]), (r.get("error") or "").replace("|", "/")]
                     for r in failed]) if failed else "None.\n")
    md.append("\n## Appendix: per-program breakdown (overhead, median [min, max])\n")
    for e in ("fig8", "fig9"):
        if data.get(e):
            md.append("\n### %s\n" % e + breakdown_detail(data[e]))
    md.append("\nPlots made: %s\n" % ", ".join(os.path.relpath(m, folder) for m in made))
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("".join(md))
