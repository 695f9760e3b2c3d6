"""The figures, drawn with gnuplot (Debian gnuplot-nox) as SVG and PNG.

Each figure writes its data as NAME.dat and its script as NAME.gp into plots/ next to the
images, so a figure can be restyled by hand (`gnuplot NAME.gp` makes the SVG) without rerunning
the evaluation.
"""
import math
import os
import shutil
import subprocess

import analyze as an

TERMS = [("svg", "set terminal svg size %d,%d dynamic enhanced font 'sans,11' background '#ffffff'"),
         ("png", "set terminal pngcairo size %d,%d enhanced font 'sans,10'")]
COMMON = """set datafile missing '?'
set style fill solid 0.9 border -1
set grid ytics lc rgb '#dddddd'
set key top left
"""


def num(x, scale=1.0):
    return "?" if x is None or (isinstance(x, float) and math.isnan(x)) else "%.6g" % (x * scale)


def q(s):
    # enhanced text: "_" subscripts, "@" makes a phantom box (as in "mt_shared_hash@8")
    return '"%s"' % s.replace("_", "\\\\_").replace("@", "\\\\@")


def render(folder, name, data, body, size=(900, 500)):
    """Write NAME.dat / NAME.gp and draw NAME.svg and NAME.png; returns the images made."""
    if not shutil.which("gnuplot"):
        return []
    pdir = os.path.join(folder, "plots")
    os.makedirs(pdir, exist_ok=True)
    for fname, text in data.items():
        with open(os.path.join(pdir, fname), "w") as f:
            f.write(text)
    made = []
    for ext, term in TERMS:
        script = "%s\nset output '%s.%s'\n%s%s" % (term % size, name, ext, COMMON, body)
        if ext == "svg":
            with open(os.path.join(pdir, name + ".gp"), "w") as f:
                f.write(script)
        p = subprocess.run(["gnuplot"], input=script, text=True, cwd=pdir, capture_output=True)
        out = os.path.join(pdir, "%s.%s" % (name, ext))
        if p.returncode == 0 and os.path.exists(out) and os.path.getsize(out) > 0:
            made.append(out)
        else:
            print("plot: gnuplot failed on %s.%s: %s" % (name, ext, p.stderr[-500:]))
    return made


def hist_body(title, ylabel, ncols, titles, datafile, extra=""):
    cols = ", ".join("'%s' using %d%s title %s" % (datafile if i == 0 else "", i + 2,
                                                   ":xtic(1)" if i == 0 else "", q(t))
                     for i, t in enumerate(titles[:ncols]))
    return ("set title %s\nset ylabel %s\nset style data histogram\n"
            "set style histogram cluster gap 1\nset xtics rotate by -30\n"
            # bars start at 0: autoscale the bottom only below 0 (negative overheads are noise)
            "set yrange [*<0:*]\nset key outside below horizontal\n%s"
            "plot %s\n" % (q(title), q(ylabel), extra, cols))


def fig7(folder, rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    data, body = {}, "set multiplot layout 1,2\n"
    for a in ("callgraph", "pathprof"):
        lines = ["# program  " + "cab nway ffwd" + "  (overhead %)"]
        for p in progs + ["geomean"]:
            vals = [cells.gm(progs, "%s/%s" % (a, b)) if p == "geomean" else cells.med(p, "%s/%s" % (a, b))
                    for b in ("cab", "nway", "ffwd")]
            lines.append("%s %s" % (q(p), " ".join(num(an.ovh(v), 100) for v in vals)))
        data["fig7_%s.dat" % a] = "\n".join(lines) + "\n"
        body += hist_body("%s: concurrent exhaustive overhead" % a, "overhead over uninstrumented (%)", 3,
                          ["CAB", "N-way buffering", "FastForward"], "fig7_%s.dat" % a)
    body += "unset multiplot\n"
    return render(folder, "fig7", data, body, (1200, 500))


def breakdown(folder, name, rows, title):
    cells, progs = an.Cells(rows), an.programs(rows)
    lines = ["# analysis  instrument enqueue communicate concurrent sequential (overhead %, geomean over programs)"]
    for a in an.ANALYSES:
        lines.append("%s %s" % (a, " ".join(num(an.ovh(cells.gm(progs, "%s/%s" % (a, s))), 100) for s in an.STAGES)))
    body = hist_body(title, "overhead over uninstrumented (%%, geomean of %d programs)" % len(progs), 5,
                     ["instrument", "enqueue", "communicate", "concurrent analyzer", "sequential analyzer"],
                     name + ".dat")
    return render(folder, name, {name + ".dat": "\n".join(lines) + "\n"}, body)


def fig10(folder, rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    sizes = sorted({int(r["ring_kb"]) for r in rows if r["ring_kb"] is not None})
    lines = ["# ring_kb  then per program: overhead% blocked_ms"]
    for s in sizes:
        c = "pathprof/%dk" % s
        lines.append("%d %s" % (s, " ".join("%s %s" % (num(an.ovh(cells.med(p, c)), 100), num(cells.med(p, c, "blocked_ms")))
                                            for p in progs)))
    ov = ", ".join("'fig10.dat' using 1:%d with linespoints lw 2 title %s" % (2 + 2 * i, q(p)) for i, p in enumerate(progs))
    bl = ", ".join("'fig10.dat' using 1:%d with linespoints lw 2 title %s" % (3 + 2 * i, q(p)) for i, p in enumerate(progs))
    body = ("set multiplot layout 1,2\nset logscale x 2\nset xlabel 'CAB ring size (KB)'\n"
            "set format x '%%g'\nset xtics (16,64,256,1024,4096,16384)\n"
            "set title 'pathprof overhead vs ring size'\nset ylabel 'overhead (%%)'\nplot %s\n"
            "set title 'producer blocked time (sum over CABs)'\nset ylabel 'blocked (ms, median)'\n"
            "set yrange [0:*]\nplot %s\nunset multiplot\n" % (ov, bl))
    return render(folder, "fig10", {"fig10.dat": "\n".join(lines) + "\n"}, body, (1200, 480))


def fig11(folder, rows):
    cells, progs = an.Cells(rows), an.programs(rows)
    rates = sorted({r["rate"] for r in rows if isinstance(r["rate"], float)})
    lines = ["# rate%  per analysis: overhead% exhaustive_overhead% error_all% error_hot%"]
    for rate in rates:
        cols = []
        for a in ("callgraph", "pathprof"):
            c = "%s/%g" % (a, rate)
            ea = [cells.med(p, c, "error_all") for p in progs]
            eh = [cells.med(p, c, "error_hot") for p in progs]
            ea = [e for e in ea if e is not None]
            eh = [e for e in eh if e is not None and not math.isnan(e)]
            cols += [num(an.ovh(cells.gm(progs, c)), 100), num(an.ovh(cells.gm(progs, a + "/exhaustive")), 100),
                     num(sum(ea) / len(ea) if ea else None, 100), num(sum(eh) / len(eh) if eh else None, 100)]
        lines.append("%g %s" % (100 * rate, " ".join(cols)))
    body = "set multiplot layout 2,2\nset logscale x 10\nset xlabel 'sampling rate (%)'\nset format x '%g'\n"
    for i, a in enumerate(("callgraph", "pathprof")):
        o = 2 + 4 * i
        body += ("set title '%s: overhead'\nset ylabel 'overhead (%%, geomean)'\nunset logscale y\nset yrange [*:*]\n"
                 "plot 'fig11.dat' using 1:%d with linespoints lw 2 title 'sampling', "
                 "'' using 1:%d with lines dt 2 lw 2 title 'exhaustive'\n" % (a, o, o + 1))
        body += ("set title '%s: error rate'\nset ylabel 'error (%%, mean over programs)'\nset logscale y 10\n"
                 "plot 'fig11.dat' using 1:%d with linespoints lw 2 title 'all items (paper)', "
                 "'' using 1:%d with linespoints lw 2 title 'items seen >= 100 times', 3 with lines dt 3 title '3%%'\n"
                 % (a, o + 2, o + 3))
    body += "unset multiplot\n"
    out = render(folder, "fig11", {"fig11.dat": "\n".join(lines) + "\n"}, body, (1100, 800))
    if any(r["form"] == "code" for r in rows):
        fig11_code(folder, rows, cells, progs, rates)
    return out


def fig11_code(folder, rows, cells, progs, rates):
    """fig11_code: the rate curve of both forms side by side: overhead of the CAB's sampling
    (events) and of sampled code per analysis, and sampled code's weighted error."""
    analyses = ("callgraph", "calltree", "pathprof")
    lines = ["# rate%  per analysis: events_overhead% code_overhead% exhaustive_overhead% code_weighted_error%"]
    for rate in rates:
        cols = []
        for a in analyses:
            ev, c = "%s/%g" % (a, rate), "%s/code/%g" % (a, rate)
            w = [cells.med(p, c, "error_weighted") for p in progs]
            w = [x for x in w if x is not None and not math.isnan(x)]
            has_ev = any(r["config"] == ev for r in rows)
            cols += [num(an.ovh(cells.gm(progs, ev)) if has_ev else None, 100), num(an.ovh(cells.gm(progs, c)), 100),
                     num(an.ovh(cells.gm(progs, a + "/exhaustive")), 100), num(sum(w) / len(w) if w else None, 100)]
        lines.append("%g %s" % (100 * rate, " ".join(cols)))
    body = "set multiplot layout 2,3\nset logscale x 10\nset xlabel 'sampling rate (%)'\nset format x '%g'\n"
    for i, a in enumerate(analyses):
        o = 2 + 4 * i
        body += ("set title '%s: overhead'\nset ylabel 'overhead (%%, geomean)'\nunset logscale y\nset yrange [*:*]\n"
                 "plot 'fig11_code.dat' using 1:%d with linespoints lw 2 title 'events (CAB)', "
                 "'' using 1:%d with linespoints lw 2 title 'code', '' using 1:%d with lines dt 2 lw 2 title 'exhaustive'\n"
                 % (a, o, o + 1, o + 2))
    for i, a in enumerate(analyses):
        o = 2 + 4 * i
        body += ("set title '%s: sampled code, weighted error'\nset ylabel 'weighted error (%%)'\nunset logscale y\n"
                 "set yrange [0:*]\nplot 'fig11_code.dat' using 1:%d with linespoints lw 2 title 'code', "
                 "2 with lines dt 3 title '2%%'\n" % (a, o + 3))
    body += "unset multiplot\n"
    return render(folder, "fig11_code", {"fig11_code.dat": "\n".join(lines) + "\n"}, body, (1500, 800))


def shadow(folder, rows):
    """shadow: the shadow profiling paper's figures (overhead and accuracy against the load, one
    curve per sample length): per analysis, the overhead (geomean over programs) with the
    exhaustive concurrent overhead as a dashed line, and the weighted error and hot-item overlap
    (means over programs of the per-program medians)."""
    cells, progs = an.Cells(rows), an.programs(rows)
    grid = {(int(r["length"]), r["load"]) for r in rows if r["form"] == "shadow"}
    lengths, loads = sorted({n for n, _ in grid}), sorted({ld for _, ld in grid})
    analyses = [a for a in ("callgraph", "pathprof") if any(r["analysis"] == a for r in rows)]
    lines = ["# load  per analysis, per length: overhead%% weighted_error%% hot_overlap%%; then per analysis: "
             "exhaustive_overhead%%  (lengths %s)" % " ".join(map(str, lengths))]
    for ld in loads:
        cols = []
        for a in analyses:
            for n in lengths:
                c = an.shadow_key(a, n, ld)
                cols += [num(an.ovh(cells.gm(progs, c)), 100), num(an.mean_of(cells, progs, c, "error_weighted"), 100),
                         num(an.mean_of(cells, progs, c, "hot_overlap"), 100)]
        cols += [num(an.ovh(cells.gm(progs, a + "/exhaustive")), 100) for a in analyses]
        lines.append("%g %s" % (ld, " ".join(cols)))
    per = 3 * len(lengths)
    ex0 = 2 + per * len(analyses)
    body = "set multiplot layout %d,3\nset logscale x 2\nset xlabel 'load (live shadows on average)'\n" % len(analyses)
    for i, a in enumerate(analyses):
        for k, (what, unit) in enumerate((("overhead", "overhead (%, geomean)"), ("weighted error", "weighted error (%)"),
                                          ("hot-item overlap", "hot-item overlap (%)"))):
            curves = ", ".join("%s using 1:%d with linespoints lw 2 title '%d ticks'" % (
                "'shadow.dat'" if j == 0 else "''", 2 + per * i + 3 * j + k, n) for j, n in enumerate(lengths))
            if k == 0:
                curves += ", '' using 1:%d with lines dt 2 lw 2 title 'exhaustive'" % (ex0 + i)
            body += "set title '%s: %s'\nset ylabel '%s'\nset yrange [*:*]\nplot %s\n" % (a, what, unit, curves)
    body += "unset multiplot\n"
    return render(folder, "shadow", {"shadow.dat": "\n".join(lines) + "\n"}, body, (1500, 500 * len(analyses)))


def costmodel(folder, agg):
    lines = ["# analysis  Ec^A Ec^P predicted measured Es (units of A)"]
    for m in agg:
        lines.append("%s %s" % (m["analysis"], " ".join(num(m[k]) for k in ("Ec_A", "Ec_P", "Ec_pred", "Ec_meas", "Es"))))
    body = hist_body("Cost model (section 4): predicted vs measured, native threads", "time / A (uninstrumented)",
                     5, ["E_c^A = A+A_i+A_q", "E_c^P = P+P_c", "E_c predicted", "E_c measured", "E_s measured"],
                     "costmodel.dat")
    return render(folder, "costmodel", {"costmodel.dat": "\n".join(lines) + "\n"}, body)


def summary(folder, data):
    """Concurrent vs sequential overhead per analysis, both thread models: the headline."""
    lines = ["# analysis  native_conc native_seq green_conc green_seq (overhead %)"]
    cols = []
    for name in ("fig8", "fig9"):
        rows = data.get(name)
        cols.append((an.Cells(rows), an.programs(rows)) if rows else None)
    for a in an.ANALYSES:
        vals = []
        for c in cols:
            for s in ("full", "sequential"):
                vals.append(num(an.ovh(c[0].gm(c[1], "%s/%s" % (a, s))), 100) if c else "?")
        lines.append("%s %s" % (a, " ".join(vals)))
    body = hist_body("Tandem: concurrent (CAB) vs sequential analysis overhead", "overhead (%, geomean over programs)",
                     4, ["concurrent, native threads", "sequential, native", "concurrent, green threads", "sequential, green"],
                     "summary.dat")
    return render(folder, "summary", {"summary.dat": "\n".join(lines) + "\n"}, body)


def full(folder, rows):
    """Grouped bars per program@threads: the slowdown under block, self and adaptive; one panel
    per analysis and -Xaffinity."""
    per = an.full_ring(rows)
    affs = sorted({t["affinity"] for t in per}, key=lambda x: (x != "none", x))
    data, body = {}, "set multiplot layout %d,%d title %s\n" % (
        len(affs), len(an.FULL_ANALYSES), q("The deferred-methods paper's comparison on Tandem: "
                                           "synchronous / thread pool / adaptive, more threads than cores"))
    for aff in affs:
        for a in an.FULL_ANALYSES:
            ts = [t for t in per if t["affinity"] == aff and t["analysis"] == a]
            name = "full_%s_%s.dat" % (a, aff)
            lines = ["# program@threads  block self adaptive  (slowdown over uninstrumented, median)"]
            lines += ["%s %s" % (q(t["program"]), " ".join(num(t[pol][0]) for pol in an.POLICIES)) for t in ts]
            # gnuplot cannot plot a histogram without rows: a panel with no runs shows "?"
            if not ts:
                lines.append('"(no runs)" ? ? ?')
            data[name] = "\n".join(lines) + "\n"
            body += hist_body("%s, -Xaffinity=%s" % (a, aff), "slowdown (x uninstrumented, median)", 3,
                              ["thread pool (block)", "synchronous (self)", "adaptive"], name,
                              # 1 = as fast as the uninstrumented run
                              "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 front\n")
    body += "unset multiplot\n"
    return render(folder, "full", data, body, (1200, 480 * len(affs)))


def all_plots(folder, data, agg):
    made = []
    if data.get("fig7"):
        made += fig7(folder, data["fig7"])
    if data.get("fig8"):
        made += breakdown(folder, "fig8", data["fig8"], "Fig. 8: exhaustive overhead breakdown, native threads")
    if data.get("fig9"):
        made += breakdown(folder, "fig9", data["fig9"], "Fig. 9: exhaustive overhead breakdown, green threads")
    if data.get("fig10"):
        made += fig10(folder, data["fig10"])
    if data.get("fig11"):
        made += fig11(folder, data["fig11"])
    if agg:
        made += costmodel(folder, agg)
    if data.get("fig8") or data.get("fig9"):
        made += summary(folder, data)
    if data.get("full"):
        made += full(folder, data["full"])
    if data.get("shadow"):
        made += shadow(folder, data["shadow"])
    return made
