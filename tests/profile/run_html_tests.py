#!/usr/bin/env python3
"""-Xprofile.format=html in a real browser (headless Chromium, Debian's chromium package).

For each run below, the same program with the same options is also profiled as JSON (and as
annotate), and the page must agree with it:

  data       the JSON object embedded in the page parses and holds, for every deterministic
             analysis, exactly the document -Xprofile.format=json writes; the page refers to
             nothing outside itself (no src/href to a URL, no <link>, url() or @import).
  browser    Chromium loads the file (--dump-dom): the viewer finished (<html
             data-viewer="ready">), showed no error (no div#viewer-error) and the console
             has no message ("Uncaught" or any CONSOLE line on stderr).
  content    in the rendered DOM (scripts removed): every function name of the profile;
             the methodcount and call graph tables' counts (data-v) equal the JSON's; the
             flame graph has a frame for every context with at least 1% of the calls; the
             annotated source's per-line counts equal -Xprofile.format=annotate's; the
             streams table equals -Xstats' produced/consumed/dropped; the thread count;
             input-size plots (one point per size); cache misses per function and, in the
             annotated source of the functions with most misses, per line (the page's own
             cachesim numbers); the partial and sampled banners.
  controls   opened as report.html#selftest, the viewer works its own controls (hover
             tooltip, zoom, search, reset, Enter and Escape, threads merged, sort,
             select) and reports each as true.
  screenshot Chromium's --screenshot of the page is written (a PNG of some size).

Runs: every analysis but inputsize, concurrent and sequential; two language threads, native
and green; inputsize; a program that fails (partial profile); sampled code and sampled
events (estimates; the streams' dropped events); a
program whose path and source hold "</script><!--" (the embedding's escape); a run ended by
SIGINT (partial: the page is written and draws).
Skipped (status 77) when chromium is not installed (scripts/setup.sh installs it).
`--screenshot FILE` also writes the page of the native threads run there (how
docs/html-report.png was made)."""
import argparse
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = "html_report.lua"
ALL = "calltree,callgraph,methodcount,pathprof,cachesim"
# Analyses whose JSON is the same on every run of a deterministic program. cachesim's counts
# depend on addresses (ASLR), inputsize is checked on its own run.
EXACT = ("calltree", "callgraph", "methodcount", "pathprof", "inputsize")
check = th.Checks()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def run(tandem, args, cwd):
    r = th.run_once(th.tandem_argv(tandem, *args), cwd=cwd, timeout=300)
    return r.code, r.out, r.err


def profile(tandem, tmp, cwd, fmt, opts, prog_args):
    out = os.path.join(tmp, f"report.{fmt}")
    if os.path.exists(out):
        os.unlink(out)
    code, so, se = run(tandem, [*opts, f"-Xprofile.format={fmt}", f"-Xprofile.out={out}", *prog_args], cwd)
    text = ""
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            text = f.read()
    return code, text, se, out


def browser(chromium, path, extra, hash_=""):
    """(DOM text, stderr) of Chromium's rendering of file [path]."""
    r = subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                        "--user-data-dir=" + os.path.join(os.path.dirname(path), "chromium-profile"), *extra,
                        "file://" + path + hash_], capture_output=True, text=True, timeout=120)
    return r.stdout, r.stderr


def page_data(page):
    m = re.search(r'<script type="application/json" id="profile-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1)) if m else None


def visible(dom):
    """The DOM without its scripts (which hold the data, names and all), as text."""
    return html.unescape(re.sub(r"<script\b.*?</script>", "", dom, flags=re.S))


def section(dom, sid):
    m = re.search(r'<section id="%s">(.*?)</section>' % re.escape(sid), dom, re.S)
    return m.group(1) if m else ""


def table_rows(part):
    """{first cell text: [data-v of each other cell, None where it has none]} of the rows of
    the first table in [part]."""
    m = re.search(r"<tbody>(.*?)</tbody>", part, re.S)
    rows = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1) if m else "", re.S):
        cells = re.findall(r'<td([^>]*)>(.*?)</td>', tr, re.S)
        if len(cells) >= 2:
            vs = [re.search(r'data-v="([^"]*)"', c[0]) for c in cells[1:]]
            rows[html.unescape(cells[0][1])] = [float(v.group(1)) if v else None for v in vs]
    return rows


def table_counts(part):
    """{first cell text: data-v of the second cell} of the rows of the first table in [part]."""
    return {k: v[0] for k, v in table_rows(part).items()}


def annotate_counts(report):
    """{(function, line): count} of an -Xprofile.format=annotate report."""
    got, fn = {}, None
    for line in report.splitlines():
        m = re.match(r"-- (.*): \d+ line entries", line)
        if m or line.startswith("-- ") or (line and not line.startswith(" ")):
            fn = m.group(1) if m else None  # another function, or another analysis's report (cachesim's)
            continue
        m = re.match(r"\s+(\d+)\s+(\d+)(  |$)", line)
        if m and fn is not None:
            got[(fn, int(m.group(2)))] = got.get((fn, int(m.group(2))), 0) + int(m.group(1))
    return got


def html_annotate_counts(dom, data):
    names = {f["id"]: f["name"] for f in data["functions"]}
    got = {}
    for fid, body in re.findall(r'<div class="annotated" data-fid="(\d+)">(.*?)</table></div></div>', dom, re.S):
        for line, attrs in re.findall(r'<tr class="hot" data-line="(\d+)"><td class="num" data-v="([^"]*)"', body):
            got[(names[int(fid)], int(line))] = round(float(attrs))
    return got


def check_case(name, tandem, chromium, tmp, cwd, opts, prog_args, expect_code=0, shot=None):
    code, page, se, path = profile(tandem, tmp, cwd, "html", opts, prog_args)
    if not check(f"{name}: exit {expect_code}, page written", code == expect_code and page, f"{code} {se[-1500:]!r}"):
        return
    check.bump("pages")
    jcode, jtext, _, _ = profile(tandem, tmp, cwd, "json", [o for o in opts if o != "-Xstats"], prog_args)
    docs = {d["analysis"]: d for d in th.json_docs(jtext)}
    # data
    data = page_data(page)
    if not check(f"{name}: embedded data parses", data is not None, page[:500]):
        return
    got = {d["analysis"]: d for d in data["analyses"]}
    check(f"{name}: the page has every analysis", set(got) == set(docs), f"{sorted(got)} != {sorted(docs)}")
    for a in EXACT:
        if a in docs and not any(o.startswith("-Xsample") for o in opts):
            check(f"{name}: {a} in the page == its JSON report", got.get(a) == docs[a], f"{str(got.get(a))[:600]} != {str(docs[a])[:600]}")
    outside = re.findall(r"""(?:src|href)\s*=\s*["']?(?:[a-z]+:|//)|<link\b|url\(|@import""", page, re.I)
    check(f"{name}: nothing outside the page", not outside, outside[:5])
    # browser
    dom, err = browser(chromium, path, ["--dump-dom"])
    check(f"{name}: viewer ready", re.search(r'<html lang="en" data-viewer="ready"', dom) is not None, dom[:300] + err[-1500:])
    check(f"{name}: no viewer error", 'id="viewer-error"' not in dom, re.findall(r'viewer-error">([^<]*)', dom)[:3])
    console = [l for l in err.splitlines() if "Uncaught" in l or ":CONSOLE" in l]
    check(f"{name}: no console message", not console, console[:5])
    text = visible(dom)
    names = set()
    for a in ("methodcount", "cachesim", "inputsize"):
        names |= {f["function"] for f in got.get(a, {}).get("functions", [])}
    for e in got.get("callgraph", {}).get("edges", []):
        names |= {e["caller"], e["callee"]}
    missing = sorted(n for n in names if n not in text)
    check(f"{name}: every function name rendered", names and not missing, missing[:5])
    scale = 1.0
    if "methodcount" in got:
        mc = got["methodcount"]
        scale = 1 / mc["sample_rate"] if mc["estimated"] else 1.0
        want = {f["function"]: round(f["calls"] * scale) for f in mc["functions"]}
        rows = {k: round(v) for k, v in table_counts(section(dom, "methodcount")).items()}
        check(f"{name}: calls per function == methodcount", rows == want, f"{rows} != {want}")
    if "callgraph" in got:
        cg = got["callgraph"]
        want = {}
        for e in cg["edges"]:
            want[e["callee"]] = want.get(e["callee"], 0) + e["calls"]
            want.setdefault(e["caller"], 0)
        sc = 1 / cg["sample_rate"] if cg["estimated"] else 1.0
        want = {k: round(v * sc) for k, v in want.items()}
        rows = {k: round(v) for k, v in table_counts(section(dom, "callgraph")).items()}
        check(f"{name}: call graph table == callgraph edges", rows == want, f"{rows} != {want}")
    if "cachesim" in got:
        # The run's own numbers (another run's depend on addresses).
        cs = got["cachesim"]
        want = {f["function"]: (f["accesses"], f["l1_misses"], f["l2_misses"]) for f in cs["functions"]}
        m = re.search(r"<h3>Misses per function</h3>(.*?)</table>", section(dom, "cache"), re.S)
        rows = {k: (round(v[0]), round(v[1]), round(v[3])) for k, v in table_rows(m.group(1) if m else "").items()}
        check(f"{name}: misses per function (accesses, L1, L2) == cachesim", want and rows == want, f"{rows} != {want}")
        # Per line: the annotated source of the (up to) 10 functions with most L1 misses shows
        # each line's accesses, L1 and L2 misses as cachesim's JSON has them; the per-line
        # table has a row for every line with accesses.
        sc = 1 / cs["sample_rate"] if cs["estimated"] else 1.0
        top = [f for f in cs["functions"] if f["id"] and f["lines"]][:10]
        want = {(f["id"], ln["line"]): tuple(round(ln[k] * sc) for k in ("accesses", "l1_misses", "l2_misses"))
                for f in top for ln in f["lines"] if ln["accesses"]}
        mine = {}
        for fid, body in re.findall(r'<div class="annotated-cache" data-fid="(\d+)">(.*?)</table></div></div>', dom, re.S):
            for line, cells in re.findall(r'<tr class="hot" data-line="(\d+)">((?:<td class="num" data-v="[^"]*">[^<]*</td>){3})',
                                          body):
                mine[(int(fid), int(line))] = tuple(round(float(v)) for v in re.findall(r'data-v="([^"]*)"', cells))
        check(f"{name}: annotated source's misses per line == cachesim's lines", want and mine == want,
              f"{sorted(set(mine.items()) ^ set(want.items()))[:8]}")
        nlines = sum(1 for f in cs["functions"] for ln in f["lines"] if ln["accesses"])
        body = re.search(r"<tbody>(.*?)</tbody>", section(dom, "cachelines"), re.S)
        check(f"{name}: a row per source line with accesses", body and body.group(1).count("<tr") == min(nlines, 1000),
              (nlines, body.group(1).count("<tr") if body else None))
    if "calltree" in got:
        ct = got["calltree"]
        frames = set(html.unescape(t) for t in re.findall(r'<div class="frame[^"]*"[^>]*>([^<]*)</div>', dom))
        total = max(ct["total_calls"], 1)
        want = set()
        for t in ct["threads"]:
            kids, calls = {}, {}
            for n in t["nodes"]:
                calls[n["id"]] = n["calls"]
                if n["parent"] is not None:
                    kids.setdefault(n["parent"], []).append(n["id"])

            def incl(i):
                return calls[i] + sum(incl(k) for k in kids.get(i, []))
            want |= {n["function"] for n in t["nodes"] if n["parent"] is not None and incl(n["id"]) >= total / 100}
        check(f"{name}: a flame graph frame for every context with 1% of the calls", want <= frames, sorted(want - frames)[:5])
        nt = len(ct["threads"])
        check(f"{name}: {nt} language thread(s) said", f"{nt} language thread{'s' if nt != 1 else ''} profiled" in text,
              re.findall(r"language threads? profiled", text))
    if "pathprof" in got and not any(o.startswith("-Xsample") for o in opts):
        _, ann, _, _ = profile(tandem, tmp, cwd, "annotate", [o for o in opts if o != "-Xstats"], prog_args)
        want, mine = annotate_counts(ann), html_annotate_counts(dom, data)
        check(f"{name}: annotated source == -Xprofile.format=annotate", want and mine == want,
              f"{sorted(set(mine.items()) ^ set(want.items()))[:8]}")
    if "-Xstats" in opts:
        stats = th.parse_stats(se)
        want = {c["who"]: (c["produced"], c["consumed"], c["dropped"]) for c in stats.cabs}
        rows = {}
        for tr in re.findall(r"<tr>(.*?)</tr>", re.search(r'<table class="streams">(.*?)</table>', dom, re.S).group(1), re.S):
            cells = re.findall(r"<td[^>]*>([^<]*)</td>", tr)
            vals = re.findall(r'data-v="(\d+)"', tr)
            if cells and cells[0] != "total" and len(vals) == 3:
                rows[cells[0]] = tuple(int(v) for v in vals)
        check(f"{name}: events per stream == -Xstats", want and rows == want, f"{rows} != {want}")
    if "inputsize" in got:
        plots = re.findall(r'<svg class="plot".*?</svg>', dom, re.S)
        fs = [f for f in got["inputsize"]["functions"] if len(f["trms_fit"]["points"]) >= 2]
        check(f"{name}: input-size plots", plots and len(plots) >= min(len(fs), 8), len(plots))
        inv = [f for f in fs if f["function"].startswith("inversions ")]
        if check(f"{name}: inversions has sizes", inv, [f["function"] for f in fs]):
            p = [x for x in plots if f"<title>{html.escape(inv[0]['function'], quote=False)}</title>" in x]
            check(f"{name}: inversions plotted, one point per size", p and p[0].count("<circle") == len(inv[0]["trms_fit"]["points"]),
                  p[0].count("<circle") if p else None)
    partial = any(d["partial"] for d in got.values())
    check(f"{name}: partial said iff partial", ("Partial profile:" in text) == partial and
          ("partial (the program was interrupted)" in text) == partial, partial)
    check(f"{name}: estimates said iff sampled", ("counts are estimates" in text) == any(d["estimated"] for d in got.values()))
    # controls
    dom2, err2 = browser(chromium, path, ["--dump-dom"], "#selftest")
    console = [l for l in err2.splitlines() if "Uncaught" in l or ":CONSOLE" in l]
    check(f"{name}: no console message while the controls are worked", not console, console[:5])
    m = re.search(r'<pre id="selftest">([^<]*)</pre>', dom2)
    res = json.loads(html.unescape(m.group(1))) if m else {}
    want_keys = ({"frames", "hover", "zoom", "search", "reset", "keys"} if "calltree" in got else set()) | \
                ({"merged"} if len(got.get("calltree", {}).get("threads", [])) > 1 else set()) | \
                ({"sort", "select"} if "callgraph" in got else set())
    check(f"{name}: controls work", set(res) == want_keys and all(res.values()), res)
    # screenshot
    png = shot or os.path.join(tmp, "page.png")
    browser(chromium, path, ["--hide-scrollbars", "--window-size=1280,1700", "--screenshot=" + png])
    check(f"{name}: screenshot", os.path.exists(png) and os.path.getsize(png) > 20000, png)


def check_interrupted(tandem, chromium, tmp):
    """SIGINT while known_forever.lua runs: the page is written, marked partial, and draws."""
    out = os.path.join(tmp, "interrupted.html")
    argv = th.tandem_argv(tandem, "-Xprofile=calltree,callgraph,pathprof", "-Xprofile.format=html",
                          f"-Xprofile.out={out}", "known_forever.lua")
    ready, code = th.signal_when_ready(argv, signal.SIGINT, cwd=HERE, timeout=120)
    name = "interrupted"
    if not check(f"{name}: killed by SIGINT after 'ready', page written", ready == b"ready\n" and
                 code == -signal.SIGINT and os.path.exists(out), (ready, code)):
        return
    check.bump("pages")
    dom, err = browser(chromium, out, ["--dump-dom"])
    check(f"{name}: viewer ready, no error", '<html lang="en" data-viewer="ready"' in dom and 'id="viewer-error"' not in dom,
          re.findall(r'viewer-error">([^<]*)', dom)[:3])
    console = [l for l in err.splitlines() if "Uncaught" in l or ":CONSOLE" in l]
    check(f"{name}: no console message", not console, console[:5])
    text = visible(dom)
    check(f"{name}: partial said", "Partial profile:" in text and "partial (the program was interrupted)" in text)
    check(f"{name}: the loop's functions drawn", re.search(r'<div class="frame[^>]*>g \(known_forever.lua:4\)</div>', dom) is not None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default=th.default_tandem())
    ap.add_argument("--screenshot", help="also write the native threads run's page as a PNG here")
    a = ap.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("skip: chromium is not installed (apt-get install chromium; scripts/setup.sh installs it)")
        return 77
    tandem = os.path.abspath(a.tandem)
    with tempfile.TemporaryDirectory(prefix="tandem_html_") as tmp:
        cases = [
            ("all concurrent", [f"-Xprofile={ALL}", "-Xstats"], [PROG], 0),
            ("all sequential", [f"-Xprofile={ALL}", "-Xanalysis=sequential"], [PROG], 0),
            ("threads native", [f"-Xprofile={ALL}", "-Xstats"], [PROG, "threads"], 0),
            ("threads green", [f"-Xprofile={ALL}", "-Xthreads=green", "-Xcarriers=2", "-Xstats"], [PROG, "threads"], 0),
            ("inputsize", ["-Xprofile=inputsize,calltree"], [PROG], 0),
            ("partial", ["-Xprofile=calltree,callgraph,methodcount,pathprof"], ["known_fails.lua"], 1),
            ("sampled", ["-Xprofile=calltree,callgraph,methodcount", "-Xsample.mode=code", "-Xsample.rate=0.5",
                         "-Xsample.seed=7"], [PROG], 0),
            ("sampled events", ["-Xprofile=calltree,callgraph,methodcount", "-Xcab.mode=sampling", "-Xsample.rate=0.5",
                                "-Xstats"], [PROG], 0),
        ]
        for name, opts, args, code in cases:
            check_case(name, tandem, chromium, tmp, HERE, opts, args, code,
                       shot=os.path.abspath(a.screenshot) if a.screenshot and name == "threads native" else None)
        # A path and a source line holding "</script><!--": the data must stay one JSON object.
        odd = os.path.join(tmp, "x<")
        os.makedirs(odd)
        with open(os.path.join(HERE, PROG)) as f:
            src = f.read()
        with open(os.path.join(odd, "script><!--.lua"), "w") as f:
            f.write(src.replace("local mode = ...", "local mode = ...  -- </script><script>alert(1)</script>"))
        check_case("escaping", tandem, chromium, tmp, tmp, [f"-Xprofile={ALL}"], ["x</script><!--.lua"], 0)
        check_interrupted(tandem, chromium, tmp)
    return check.finish(f"profile_html: {check.counts['pages']} pages, {check.counts['checks']} checks")


if __name__ == "__main__":
    sys.exit(main())
