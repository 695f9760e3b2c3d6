#!/usr/bin/env python3
"""Plots of an input-sensitive profile (-Xprofile=inputsize): cost against input size for the
functions whose cost grows fastest, the points and the fitted curve, with gnuplot.

One command from a program to its plots:
    profilers/tools/inputsize_plot.py --tandem build/tandem --out plots -- prog.lua [args]
or from a JSON report written before (-Xprofile=inputsize -Xprofile.format=json
-Xprofile.out=p.json):
    profilers/tools/inputsize_plot.py --out plots p.json

For each of the --top functions (the report's order: fastest growth first) it writes
<out>/<n>-<name>.svg (or .png) with the mean cost per input size as points, the min-max range
as error bars, and the fitted model (a + b f(n), its R^2 in the key); with --metric both, the
RMS points beside the TRMS ones. Also <out>/index.txt listing the files and models. gnuplot is
the Debian package gnuplot-nox (scripts/setup.sh installs it).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# gnuplot's form of each model's f(n) (prof_inputsize.c model_f: log2(1 + n)).
MODEL_F = {
    "1": "1",
    "log n": "log(1+x)/log(2)",
    "n": "x",
    "n log n": "x*log(1+x)/log(2)",
    "n^2": "x**2",
    "n^3": "x**3",
}


def slug(name, i):
    s = re.sub(r"[^A-Za-z0-9_.-]+", "_", name.split(" (")[0]).strip("_") or "function"
    return f"{i:02d}-{s[:40]}"


def gp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def curve(fit):
    if not fit.get("model"):
        return None
    return f"({fit['a']!r})+({fit['b']!r})*({MODEL_F[fit['model']]})"


def plot_one(f, path, fmt, metrics, gnuplot):
    with tempfile.TemporaryDirectory(prefix="inputsize_plot_") as d:
        plots = []
        for m, style in zip(metrics, ("pt 7 ps 0.6 lc rgb '#1f77b4'", "pt 6 ps 0.6 lc rgb '#ff7f0e'")):
            fit = f[m + "_fit"]
            data = os.path.join(d, m + ".dat")
            with open(data, "w") as fh:
                for size, n, lo, mean, hi in fit["points"]:
                    fh.write(f"{size} {mean} {lo} {hi} {n}\n")
            label = m.upper()
            plots.append(f"{gp_str(data)} using 1:2:3:4 with yerrorbars {style} title {gp_str(label + ' points')}")
            c = curve(fit)
            if c:
                key = f"{label} fit: {fit['model']}, R^2 = {fit['r2']:.4f}"
                plots.append(f"{c} with lines lw 2 {style.split(' ', 4)[-1]} title {gp_str(key)}")
        term = "svg size 800,500 dynamic" if fmt == "svg" else "png size 800,500"
        script = "\n".join([
            f"set terminal {term}",
            f"set output {gp_str(path)}",
            f"set title {gp_str(f['function'] + ' (' + str(f['calls']) + ' calls)')} noenhanced",
            "set xlabel 'input size (cells)'",
            "set ylabel 'cost (bytecode instructions)'",
            "set key left top noenhanced",
            "set grid",
            "set xrange [0:*]",
            "set yrange [0:*]",
            "plot " + ", \\\n     ".join(plots),
            "",
        ])
        r = subprocess.run([gnuplot], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"gnuplot failed on {f['function']}: {r.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("report", nargs="?", help="a JSON inputsize report (omit with -- prog.lua ...)")
    ap.add_argument("prog", nargs=argparse.REMAINDER, help="-- program and its arguments, run under --tandem")
    ap.add_argument("--tandem", help="the tandem binary to run the program with")
    ap.add_argument("--opts", default="", help="more -X options for that run (space-separated)")
    ap.add_argument("--out", default="inputsize-plots", help="directory for the plots (created)")
    ap.add_argument("--top", type=int, default=5, help="functions to plot (fastest growth first)")
    ap.add_argument("--format", choices=("svg", "png"), default="svg")
    ap.add_argument("--metric", choices=("trms", "rms", "both"), default="both")
    ap.add_argument("--min-sizes", type=int, default=2, help="skip functions with fewer distinct sizes")
    a = ap.parse_args()
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        sys.exit("inputsize_plot: gnuplot not found (Debian: gnuplot-nox; scripts/setup.sh installs it)")
    prog = [p for p in a.prog if p != "--"]
    if a.report and a.report != "--" and not prog and a.report.endswith(".json"):
        text = open(a.report).read()
    else:
        if a.report and a.report != "--":
            prog = [a.report] + prog
        if not prog or not a.tandem:
            sys.exit("inputsize_plot: give a JSON report, or --tandem and -- prog.lua [args]")
        with tempfile.TemporaryDirectory(prefix="inputsize_run_") as d:
            out = os.path.join(d, "p.json")
            argv = [a.tandem, "-Xprofile=inputsize", "-Xprofile.format=json", f"-Xprofile.out={out}",
                    *a.opts.split(), *prog]
            r = subprocess.run(argv)
            if r.returncode != 0 or not os.path.exists(out):
                sys.exit(f"inputsize_plot: {' '.join(argv)} failed ({r.returncode})")
            text = open(out).read()
    doc = next((d for d in map(json.loads, filter(None, re.split(r"\n(?=\{\"analysis\")", text)))
                if d.get("analysis") == "inputsize"), None)
    if doc is None:
        sys.exit("inputsize_plot: no inputsize document in the report")
    metrics = ["trms", "rms"] if a.metric == "both" else [a.metric]
    os.makedirs(a.out, exist_ok=True)
    index, done = [], 0
    for f in doc["functions"]:
        if done >= a.top:
            break
        if len(f["trms_fit"]["points"]) < a.min_sizes:
            continue
        done += 1
        path = os.path.join(a.out, slug(f["function"], done) + "." + a.format)
        plot_one(f, path, a.format, metrics, gnuplot)
        fits = ", ".join(f"{m.upper()} {f[m + '_fit']['model'] or '-'} (R^2 {f[m + '_fit']['r2']:.4f})" for m in metrics)
        index.append(f"{os.path.basename(path)}\t{f['function']}\t{fits}")
        print(path)
    with open(os.path.join(a.out, "index.txt"), "w") as fh:
        fh.write("\n".join(index) + ("\n" if index else ""))
    if done == 0:
        print(f"inputsize_plot: no function with at least {a.min_sizes} sizes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
