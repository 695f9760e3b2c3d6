"""What the evaluation runs: the experiments (the CAB paper's Fig. 7-11, and the deferred-methods
paper's buffer processing strategies), their configurations and the programs each uses, in the
full and the quick mode.

A configuration is a list of tandem options plus the fields the CSV and the tables group by.
Every experiment also runs the uninstrumented program ("base") in every round: overheads are
relative to the base run of the same program in the same round.

Programs and scales were chosen so that an uninstrumented run takes ~0.3-0.4 s here (quick:
about half) and the whole full mode fits in 40 minutes on 2 vCPUs (quick: 5 minutes); see
plan_seconds() for the estimate run.py prints before it starts.

A program is a bench/suite file name, optionally with "@N": its worker threads, passed as the
program's second argument (bench/suite/README.md), so "mt_shared_hash@8" runs
`mt_shared_hash.lua SCALE 8`, the base run included.
"""

SUITE = "bench/suite"
ANALYSES = ["methodcount", "callgraph", "calltree", "pathprof", "cachesim"]
STAGES = ["instrument", "enqueue", "communicate", "full"]
BUFFERS = ["cab", "nway", "ffwd"]
RATES = [0.01, 0.02, 0.05, 0.10, 0.20, 0.50, 1.00]
SAMPLED = ["callgraph", "pathprof"]
# -Xsample.mode=code (sampled instrumentation, issue 17) at every rate: the analyses whose
# overhead it is meant to cut; fixed seed so that a rerun samples the same windows
CODE_SAMPLED = ["callgraph", "calltree", "pathprof"]
CODE_SEED = 1
# Shadow profiling (-Xsample.mode=shadow, issue 20): the paper's configurations <sample size,
# load>, sample sizes in ticks; the default (2000000, 0.1) and the first defaults (200000, 1)
# are in both grids, the defaults before compiled windows (1000000, 0.25) in the full one
SHADOW_ANALYSES = ["callgraph", "pathprof"]
SHADOW_GRID = {"full": ([200000, 1000000, 2000000], [0.1, 0.25, 1]), "quick": ([200000, 2000000], [0.1, 1])}
# Where a shadow's window runs (-Xsample.windows): the instrumented twins of compiled code (the
# default) and, beside it at every point of the grid, the instrumented interpreter (before
# shadows ran compiled windows): what running them compiled buys
SHADOW_WINDOWS = ["compiled", "interpreted"]


def shadow_key(analysis, length, load, windows="compiled"):
    """The configuration of shadow profiling at <length, load> with its windows run [windows]."""
    return "%s/shadow/%d/%g%s" % (analysis, length, load, "" if windows == "compiled" else "/" + windows)
# 16 KB .. 32 MB: 12 ring sizes, powers of two
RING_SIZES = [16 << 10 << i for i in range(12)]

# Scale giving ~0.3 s uninstrumented (interpreter) per program; textindex and database do less
# work per unit of scale, sudoku, mt_parallel_map and mt_work_queue more (their scale 1 was
# doubled to run 1-3 s under the JIT; 0.1 here is the work 0.2 was before).
SCALE = {"interp": 0.2, "json": 0.2, "raytrace": 0.2, "havlak": 0.2, "sudoku": 0.1,
         "textindex": 0.4, "richards": 0.2, "database": 0.4, "physics": 0.2, "compress": 0.2,
         "spreadsheet": 0.2, "regex": 0.2, "astar": 0.2,
         "mt_pipeline": 0.2, "mt_parallel_map": 0.1, "mt_shared_hash": 0.2, "mt_work_queue": 0.1,
         "mt_bank": 0.2}

# Which programs each experiment uses. Fig. 8 gets the widest set (it carries the cost model
# and the headline targets); Fig. 10 follows the paper in using representative programs.
PROGRAMS = {
    "full": {
        "fig7": ["interp", "json", "richards", "havlak", "raytrace"],
        "fig8": ["interp", "json", "raytrace", "havlak", "richards", "database", "compress",
                 "mt_pipeline", "mt_work_queue"],
        "fig9": ["mt_pipeline", "mt_work_queue", "mt_shared_hash"],
        "fig10": ["richards", "json"],
        "fig11": ["interp", "json", "richards", "havlak"],
        # -Xprofile.always against no profiling: the single-threaded suite but physics, whose
        # run at scale 0.2 fails its own check ("cloth over-stretched") without profiling too
        "always": ["interp", "json", "raytrace", "havlak", "richards", "database", "compress", "sudoku",
                   "textindex", "spreadsheet", "regex", "astar"],
        "shadow": ["interp", "json", "richards", "havlak", "raytrace", "mt_pipeline"],
        # more program threads than the machine's two cores; the same work at 4 and 8 threads
        "full": ["mt_parallel_map@4", "mt_parallel_map@8", "mt_shared_hash@4", "mt_shared_hash@8",
                 "mt_work_queue@4", "mt_work_queue@8"],
    },
    "quick": {
        "fig7": ["richards", "json"],
        "fig8": ["richards", "json", "havlak"],
        "fig9": ["mt_pipeline"],
        "fig10": ["richards"],
        "fig11": ["richards", "json"],
        "always": ["richards", "json", "havlak", "raytrace"],
        "shadow": ["richards", "json"],
        "full": ["mt_parallel_map@8", "mt_shared_hash@4"],
    },
}
RUNS = {"full": 7, "quick": 3}
SCALE_FACTOR = {"full": 1.0, "quick": 0.5}


# Options a program runs with in every configuration of one experiment (base included). Shadow
# profiling covers a multi-threaded program only through green threads (issue 20): a fork keeps
# just the forking native thread, so under native threads no shadow starts while several run
# (-Xstats: "not forked while several native threads") and the threads' work is never sampled.
# mt_pipeline under native threads had 28% weighted error for that reason alone.
PROGRAM_OPTS = {"shadow": {"mt_pipeline": ["-Xthreads=green"]}}


def program_opts(experiment, program):
    """The options [program] runs with in every configuration of [experiment]."""
    return PROGRAM_OPTS.get(experiment, {}).get(program_args(program)[0], [])


def program_args(program):
    """(file name, extra arguments after the scale) of a program "NAME" or "NAME@THREADS"."""
    name, _, threads = program.partition("@")
    return name, [threads] if threads else []


def scale_of(program, mode):
    return round(SCALE[program_args(program)[0]] * SCALE_FACTOR[mode], 3)


class Config:
    def __init__(self, key, args, base="base", pin=None, **fields):
        self.key = key          # unique within the experiment, e.g. "pathprof/communicate"
        self.args = args        # tandem options
        self.fields = fields    # CSV columns: analysis, form, buffer, ring, rate, ...
        self.json = fields.get("json", False)  # write a JSON profile (error rate)
        self.base = base        # the key of the configuration its ratio is taken against
        # start on the application's CPU(s) with taskset (run.py says why); by default the
        # configurations without an analyzer thread
        self.pin = fields.get("form") in ("base", "sequential") if pin is None else pin


BASE = Config("base", [], form="base")
OUT_NULL = ["-Xprofile.out=/dev/null"]


def breakdown_configs(threads):
    """Fig. 8/9: every analysis at every stage of the paper's breakdown, and sequential.
    Green threads run on one carrier in every configuration: by default tandem gives the
    carriers the cores the analyzer leaves, i.e. 2 without an analyzer and 1 with one, which
    would compare the analysis against a baseline with twice the cores."""
    t = ["-Xthreads=" + threads] + (["-Xcarriers=1"] if threads == "green" else [])
    cs = [Config("base", t, form="base")]
    for a in ANALYSES:
        for st in STAGES:
            cs.append(Config("%s/%s" % (a, st), t + ["-Xprofile=" + a, "-Xprofile.stage=" + st] + OUT_NULL,
                             analysis=a, form=st))
        cs.append(Config("%s/sequential" % a, t + ["-Xprofile=" + a, "-Xanalysis=sequential"] + OUT_NULL,
                         analysis=a, form="sequential"))
    return cs


def buffer_configs():
    """Fig. 7: the three transports, concurrent exhaustive, for callgraph and pathprof."""
    cs = [BASE]
    for a in ["callgraph", "pathprof"]:
        for b in BUFFERS:
            cs.append(Config("%s/%s" % (a, b), ["-Xprofile=" + a, "-Xbuffer=" + b] + OUT_NULL,
                             analysis=a, form="full", buffer=b))
    return cs


def chunk_for(ring):
    """The chunk for a ring of [ring] bytes: the paper's 128 KB where the ring holds at least
    4 of them (2 MB / 128 KB is its default), else a quarter of the ring so that it holds more
    than the 3 chunks CAB needs; never below the 4 KB minimum."""
    return max(4096, min(128 << 10, ring // 4))


def size_configs():
    """Fig. 10: pathprof against the ring size."""
    cs = [BASE]
    for ring in RING_SIZES:
        chunk = chunk_for(ring)
        cs.append(Config("pathprof/%dk" % (ring >> 10),
                         ["-Xprofile=pathprof", "-Xcab.size=%dk" % (ring >> 10),
                          "-Xcab.chunk=%dk" % (chunk >> 10)] + OUT_NULL,
                         analysis="pathprof", form="full", ring_kb=ring >> 10, chunk_kb=chunk >> 10))
    return cs


def sampling_configs():
    """Fig. 11: callgraph and pathprof sampled at every rate by the CAB (the paper's sampling,
    form "sampling", keys ANALYSIS/RATE), callgraph, calltree and pathprof sampled by the code
    (-Xsample.mode=code, form "code", keys ANALYSIS/code/RATE), and each exhaustive (rate
    "exh")."""
    cs = [BASE]
    for a in sorted(set(SAMPLED) | set(CODE_SAMPLED)):
        cs.append(Config("%s/exhaustive" % a, ["-Xprofile=" + a, "-Xprofile.format=json"],
                         analysis=a, form="exhaustive", rate="exh", json=True))
        for r in RATES if a in SAMPLED else []:
            cs.append(Config("%s/%g" % (a, r), ["-Xprofile=" + a, "-Xprofile.format=json",
                                                "-Xcab.mode=sampling", "-Xsample.rate=%g" % r],
                             analysis=a, form="sampling", rate=r, json=True))
        for r in RATES if a in CODE_SAMPLED else []:
            cs.append(Config("%s/code/%g" % (a, r), ["-Xprofile=" + a, "-Xprofile.format=json",
                                                     "-Xsample.mode=code", "-Xsample.rate=%g" % r,
                                                     "-Xsample.seed=%d" % CODE_SEED],
                             analysis=a, form="code", rate=r, json=True))
    return cs


def shadow_configs(mode):
    """Shadow profiling (issue 20): callgraph and pathprof exhaustive (concurrent, the
    comparison) and shadowed at every <length, load> of the grid with windows compiled and
    interpreted (form "shadow", keys shadow_key's, fixed seed), JSON profiles for the errors;
    the coverage each run reached is the profile's sample_rate (run.py's "coverage")."""
    lengths, loads = SHADOW_GRID[mode]
    cs = [BASE]
    for a in SHADOW_ANALYSES:
        cs.append(Config("%s/exhaustive" % a, ["-Xprofile=" + a, "-Xprofile.format=json"],
                         analysis=a, form="exhaustive", json=True))
        for n in lengths:
            for ld in loads:
                for w in SHADOW_WINDOWS:
                    cs.append(Config(shadow_key(a, n, ld, w),
                                     ["-Xprofile=" + a, "-Xprofile.format=json", "-Xsample.mode=shadow",
                                      "-Xshadow.length=%d" % n, "-Xshadow.load=%g" % ld, "-Xsample.seed=%d" % CODE_SEED,
                                      "-Xsample.windows=" + w],
                                     analysis=a, form="shadow", length=n, load=ld, windows=w, json=True))
    return cs


FULL_ANALYSES = ["cachesim", "pathprof"]   # the expensive analyses: an analyzer falls behind
FULL_POLICIES = ["block", "self", "adaptive"]
AFFINITIES = ["none", "auto"]


def full_ring_configs():
    """The deferred-methods paper's buffer processing strategies (its section 4) as -Xcab.full:
    block = thread pool (the analyzer does all the analysis, a producer on a full ring waits),
    self = synchronous (a producer analyses its own full ring), adaptive; concurrent
    exhaustive, native threads, for the expensive analyses, under both placements:
    -Xaffinity=none is the paper's setting (program threads and the analyzer compete for both
    cores, so an analyzer that cannot keep up takes CPU time from the program), auto is
    tandem's default (the analyzer has a core to itself, the program threads share the other).
    Each placement has its own base: unpinned under none (the program gets both cores, as its
    analysed runs do), pinned to the application's CPU under auto (as in fig8)."""
    cs = []
    for aff in AFFINITIES:
        t = ["-Xthreads=native", "-Xaffinity=" + aff]
        base = "base/" + aff
        cs.append(Config(base, t, base=base, pin=aff == "auto", form="base", affinity=aff))
        for a in FULL_ANALYSES:
            for pol in FULL_POLICIES:
                cs.append(Config("%s/%s/%s" % (a, pol, aff), t + ["-Xprofile=" + a, "-Xcab.full=" + pol] + OUT_NULL,
                                 base=base, analysis=a, form="full", policy=pol, affinity=aff))
    return cs


EXPERIMENTS = [
    # name, title, configs
    ("fig7", "Fig. 7: CAB vs N-way buffering vs FastForward (concurrent exhaustive)", buffer_configs()),
    ("fig8", "Fig. 8: overhead breakdown, native threads", breakdown_configs("native")),
    ("fig9", "Fig. 9: overhead breakdown, green threads", breakdown_configs("green")),
    ("fig10", "Fig. 10: pathprof against the CAB ring size", size_configs()),
    ("fig11", "Fig. 11: sampling overhead and error against the rate", sampling_configs()),
    ("always", "The always-on preset (-Xprofile.always) against no profiling",
     [BASE, Config("always", ["-Xprofile.always", "-Xsample.seed=%d" % CODE_SEED] + OUT_NULL, form="always")]),
    ("shadow", "Shadow profiling (-Xsample.mode=shadow): overhead and accuracy against sample length and load",
     None),
    ("full", "The deferred-methods paper's comparison: synchronous (self) / thread pool (block) / adaptive, "
             "more program threads than cores", full_ring_configs()),
]


def plan(mode, only=None, factor=1.0):
    """[(name, title, configs, [(program, scale)])] for [mode], every program's scale times
    [factor] (run.py's --scale: longer runs resolve smaller overheads)."""
    out = []
    for name, title, configs in EXPERIMENTS:
        if only and name not in only:
            continue
        progs = [(p, round(scale_of(p, mode) * factor, 3)) for p in PROGRAMS[mode][name]]
        out.append((name, title, configs if configs is not None else shadow_configs(mode), progs))
    return out


def run_count(experiments, runs):
    return sum(runs * len(configs) * len(progs) for _, _, configs, progs in experiments)
