/* cab_bench.c: throughput of the CAB transports between two threads (CAB paper section 6.1,
 * Figure 7, on this machine): a producer pushes 1..N, a consumer on another core sums them
 * (the sum is checked), for each transport, against the physical limit: one core storing
 * the same N words sequentially into a ring of the same size, with no consumer.
 *
 * The hypervisor moves the two vCPUs between physical cores (shared/notes/measuring.md), so
 * every timed two-core run is framed by a cache-line ping-pong probe between the same two
 * CPUs; a run counts only if both probes put the pair in the same placement class, results
 * are reported per class, and the configurations are interleaved (limit cab nway ffwd ...,
 * then again), never run in blocks.
 *
 *   cab_bench [-n events] [-r runs] [-s ring] [-c chunk] [-p producer_cpu] [-q consumer_cpu]
 *             [-t limit,cab,cabm,nway,ffwd,sample] [-x sample_rate]
 * Sizes take the -Xcab.size syntax ("2m", "128k"). Defaults: 1e8 events, 7 runs, 2 MiB ring,
 * chunk from hwloc (4 x L1d), CPU 0 and the partner hwloc picks for it, transports
 * limit,cab,nway,ffwd,sample. cabm is CAB through cab_push with the cursor in memory (the
 * interpreter's form) instead of cab_push_r with the cursor in a register.
 *
 * Every producer loop keeps its cursor in a register, so that the transports' fast paths
 * are compared on equal terms: cab_push_r (5 instructions, cab/README.md "Generated code"),
 * the N-way and FastForward paths written out below with the same care. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cab_api.h"
#include "cli_parse.h"

#define MAX_RUNS 64
#define PROBE_BATCHES 21
#define PROBE_BATCH_TRIPS 1000

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---------------------------------------------------------------------- */
/* Round-trip probe                                                        */
/* ---------------------------------------------------------------------- */

static _Alignas(64) uint64_t probe_line;
static int probe_cpu_b;

static void *probe_peer(void *arg) {
    (void)arg;
    cab_topology_bind_self(probe_cpu_b);
    const uint64_t last = 2 * (uint64_t)PROBE_BATCHES * PROBE_BATCH_TRIPS + 2;
    for (uint64_t i = 1; i < last; i += 2) {
        while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != i) {}
        __atomic_store_n(&probe_line, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Round trip in ns of a line bounced between the calling thread and [cpu_b]: the median of
 * PROBE_BATCHES batch means, so that a batch in which either thread lost its CPU to another
 * process (the machine is shared) does not pass for a far placement. */
static double probe(int cpu_b) {
    probe_cpu_b = cpu_b;
    __atomic_store_n(&probe_line, 0, __ATOMIC_RELAXED);
    pthread_t th;
    pthread_create(&th, NULL, probe_peer, NULL);
    /* Let the peer reach its CPU before timing: one untimed round trip. */
    __atomic_store_n(&probe_line, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != 2) {}
    double batch[PROBE_BATCHES];
    uint64_t i = 3;
    for (int b = 0; b < PROBE_BATCHES; b++) {
        uint64_t t0 = now_ns();
        for (int k = 0; k < PROBE_BATCH_TRIPS; k++, i += 2) {
            __atomic_store_n(&probe_line, i, __ATOMIC_RELEASE);
            while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != i + 1) {}
        }
        batch[b] = (double)(now_ns() - t0) / PROBE_BATCH_TRIPS;
    }
    pthread_join(th, NULL);
    return median(batch, PROBE_BATCHES);
}

/* Placement classes of measuring.md. */
enum { NCLASS = 4 };
static const char *const class_name[NCLASS] = {"sibling", "near", "far", "very far"};
static int classify(double rt_ns) {
    if (rt_ns < 45) return 0;
    if (rt_ns < 150) return 1;
    if (rt_ns < 700) return 2;
    return 3;
}

/* ---------------------------------------------------------------------- */
/* Producers                                                               */
/* ---------------------------------------------------------------------- */

enum { T_LIMIT, T_CAB, T_CABM, T_NWAY, T_FFWD, T_SAMPLE, T_COUNT };
static const char *const tname[T_COUNT] = {"limit", "cab", "cabm", "nway", "ffwd", "cab-sample"};

/* CAB, cursor in a register: cab_push_r. Its loop is the listing in cab/README.md. */
__attribute__((noinline)) static void produce_cab(CabProducer *p, uint64_t n) {
    uint64_t *cur = p->cur;
    for (uint64_t i = 1; i <= n; i++) cur = cab_push_r(p, cur, i);
    p->cur = cur;
}

/* CAB, cursor in memory: cab_push, as the interpreter calls it (TLS in the VM). */
__attribute__((noinline)) static void produce_cabm(CabProducer *p, uint64_t n) {
    for (uint64_t i = 1; i <= n; i++) cab_push(p, i);
}

/* Sampling: cab_push_sampling's test (MAGIC only), cursor in a register. */
__attribute__((noinline)) static void produce_sample(CabProducer *p, uint64_t n) {
    uint64_t *cur = p->cur;
    for (uint64_t i = 1; i <= n; i++) {
        if (__builtin_expect(__atomic_load_n(cur, __ATOMIC_RELAXED) == CAB_MAGIC, 0)) {
            p->cur = cur;
            cab_push_wrap(p, i);
            cur = p->cur;
            continue;
        }
        __atomic_store_n(cur, i, __ATOMIC_RELEASE);
        cur++;
    }
    p->cur = cur;
}

/* N-way buffering: cab_nway_push with the cursor and mask in registers. */
__attribute__((noinline)) static void produce_nway(CabProducer *p, uint64_t n) {
    uint64_t *c = p->tcur;
    const uintptr_t mask = p->tmask;
    for (uint64_t i = 1; i <= n; i++) {
        *c++ = i;
        if (__builtin_expect(((uintptr_t)c & mask) == 0, 0)) {
            p->tcur = c;
            cab_nway_handover(p);
            c = p->tcur;
        }
    }
    p->tcur = c;
}

/* FastForward: cab_ffwd_push with base, mask and index in registers. */
__attribute__((noinline)) static void produce_ffwd(CabProducer *p, uint64_t n) {
    uint64_t *const base = p->base;
    const uint64_t mask = p->fmask;
    uint64_t idx = p->tidx;
    for (uint64_t i = 1; i <= n; i++) {
        uint64_t *slot = base + (idx & mask);
        if (__builtin_expect(__atomic_load_n(slot, __ATOMIC_ACQUIRE) != CAB_CLEAR, 0)) {
            p->tidx = idx;
            cab_ffwd_push_slow(p, i);
            idx = p->tidx;
            continue;
        }
        __atomic_store_n(slot, i, __ATOMIC_RELEASE);
        idx++;
    }
    p->tidx = idx;
}

/* The physical limit: [n] sequential 8-byte stores into a ring of [nslots] words, one core,
 * nobody reading. Relaxed atomic stores: plain movs, one per event, never merged into vector
 * stores (the transports store one word per event too). */
__attribute__((noinline)) static void produce_limit(uint64_t *ring, size_t nslots, uint64_t n) {
    uint64_t i = 1;
    while (i <= n) {
        uint64_t *s = ring, *end = ring + (n - i + 1 < nslots ? n - i + 1 : nslots);
        for (; s < end; s++) __atomic_store_n(s, i++, __ATOMIC_RELAXED);
    }
}

/* ---------------------------------------------------------------------- */
/* One timed run                                                           */
/* ---------------------------------------------------------------------- */

typedef struct Consumer {
    CabRing *ring;
    int cpu;
    uint64_t sum;
    int ready; /* the consumer is on its CPU */
    int go;    /* the producer has started its clock: idle time counts from here */
} Consumer;

static void sum_events(void *ctx, const uint64_t *ev, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) s += ev[i];
    ((Consumer *)ctx)->sum += s;
}

/* The consumer: take whatever is ready; while nothing is, spin with pause and count the time
 * as idle: from the first poll that found nothing to the start of the one that found
 * something (a clock read per poll while idle, none while busy). */
static void *consumer_main(void *arg) {
    Consumer *c = arg;
    cab_topology_bind_self(c->cpu);
    __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE)) {}
    uint64_t idle_since = 0;
    while (!cab_ring_done(c->ring)) {
        uint64_t t = idle_since ? now_ns() : 0;
        if (cab_consume(c->ring, sum_events, c, 0) == 0) {
            if (!idle_since) idle_since = now_ns();
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        } else if (idle_since) {
            cab_ring_add_idle_ns(c->ring, t - idle_since);
            idle_since = 0;
        }
    }
    if (idle_since) cab_ring_add_idle_ns(c->ring, now_ns() - idle_since);
    return NULL;
}

typedef struct Result {
    double rate; /* events/s */
    double secs;
    CabStats st;
} Result;

/* Returns false on a failed check (events lost). */
static bool timed_run(int t, const CabConfig *base, uint64_t n, int pcpu, int ccpu, Result *res) {
    cab_topology_bind_self(pcpu);
    memset(res, 0, sizeof *res);
    if (t == T_LIMIT) {
        uint64_t *ring;
        if (posix_memalign((void **)&ring, 4096, base->ring_bytes) != 0) exit(2);
        memset(ring, 0, base->ring_bytes); /* fault the pages in, as cab_ring_new does */
        uint64_t t0 = now_ns();
        produce_limit(ring, base->ring_bytes / 8, n);
        res->secs = (double)(now_ns() - t0) * 1e-9;
        res->rate = (double)n / res->secs;
        bool ok = ring[(n - 1) % (base->ring_bytes / 8)] == n;
        free(ring);
        return ok;
    }
    CabConfig c = *base;
    c.transport = t == T_NWAY ? CAB_TRANSPORT_NWAY : t == T_FFWD ? CAB_TRANSPORT_FFWD
                                                                  : CAB_TRANSPORT_CAB;
    c.mode = t == T_SAMPLE ? CAB_MODE_SAMPLING : CAB_MODE_EXHAUSTIVE;
    CabProducer p;
    const char *err;
    Consumer con = {0};
    con.cpu = ccpu;
    con.ring = cab_ring_new(&c, NULL, &p, &err);
    if (!con.ring) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
    pthread_t th;
    pthread_create(&th, NULL, consumer_main, &con);
    while (!__atomic_load_n(&con.ready, __ATOMIC_ACQUIRE)) {}
    uint64_t t0 = now_ns();
    __atomic_store_n(&con.go, 1, __ATOMIC_RELEASE);
    switch (t) {
    case T_CAB: produce_cab(&p, n); break;
    case T_CABM: produce_cabm(&p, n); break;
    case T_SAMPLE: produce_sample(&p, n); break;
    case T_NWAY: produce_nway(&p, n); break;
    case T_FFWD: produce_ffwd(&p, n); break;
    }
    cab_close(&p);
    pthread_join(th, NULL);
    res->secs = (double)(now_ns() - t0) * 1e-9;
    res->rate = (double)n / res->secs;
    res->st = cab_ring_stats(con.ring);
    cab_ring_free(con.ring);
    return t == T_SAMPLE || con.sum == n * (n + 1) / 2;
}

/* ---------------------------------------------------------------------- */
/* Main                                                                    */
/* ---------------------------------------------------------------------- */

static size_t size_arg(const char *s) {
    uint64_t v;
    if (!cli_parse_size(s, 1, SIZE_MAX, &v)) {
        fprintf(stderr, "cab_bench: bad size '%s' (digits with an optional k, m or g)\n", s);
        exit(2);
    }
    return (size_t)v;
}

static void print_row(const char *cls, const char *name, double *v, int m, double limit,
                      const char *extra) {
    double med = median(v, m);
    printf("| %-8s | %-10s | %6.3f [%5.3f, %5.3f] | %5.2f | %4.2f | %2d | %s |\n", cls, name,
           med / 1e9, v[0] / 1e9, v[m - 1] / 1e9, 1e9 / med, limit > 0 ? med / limit : 0.0, m,
           extra);
}

int main(int argc, char **argv) {
    uint64_t n = 100000000;
    int runs = 7, pcpu = 0, ccpu = -1;
    bool want[T_COUNT] = {true, true, false, true, true, true};
    CabConfig cfg;
    cab_config_default(&cfg);
    cfg.sample_rate = 0.1;
    bool probe_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-P")) { /* one probe, for scripts timing concurrent runs */
            probe_only = true;
            continue;
        }
        if (!v) goto usage;
        i++;
        if (!strcmp(a, "-n")) n = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-r")) runs = atoi(v);
        else if (!strcmp(a, "-s")) cfg.ring_bytes = size_arg(v);
        else if (!strcmp(a, "-c")) cfg.chunk_bytes = size_arg(v);
        else if (!strcmp(a, "-p")) pcpu = atoi(v);
        else if (!strcmp(a, "-q")) ccpu = atoi(v);
        else if (!strcmp(a, "-x")) cfg.sample_rate = atof(v);
        else if (!strcmp(a, "-t")) {
            for (int t = 0; t < T_COUNT; t++) want[t] = false;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                int t = 0;
                while (t < T_COUNT && strcmp(tok, tname[t]) &&
                       !(t == T_SAMPLE && !strcmp(tok, "sample")))
                    t++;
                if (t == T_COUNT) goto usage;
                want[t] = true;
            }
        } else goto usage;
    }
    if (runs < 1 || runs > MAX_RUNS || n < 1) goto usage;
    if (ccpu < 0) ccpu = cab_topology_pick_partner(pcpu);
    if (ccpu < 0) {
        fprintf(stderr, "cab_bench: needs two CPUs\n");
        return 2;
    }
    if (probe_only) {
        /* "probe NS CLASS": the round trip between the two CPUs right now (the harnesses run
         * it before and after every concurrent run, measuring.md) */
        cab_topology_bind_self(pcpu);
        double rt = probe(ccpu);
        printf("probe %.1f %s\n", rt, class_name[classify(rt)]);
        return 0;
    }
    const char *bad = cab_config_check(&cfg);
    if (bad) {
        fprintf(stderr, "%s\n", bad);
        return 2;
    }
    printf("cab_bench: %llu events/run, %d runs, ring %zu KiB, chunk %zu KiB, L1d %zu KiB, "
           "producer cpu %d, consumer cpu %d (share %s), sampling rate %g\n",
           (unsigned long long)n, runs, cfg.ring_bytes >> 10, cfg.chunk_bytes >> 10,
           cab_topology_l1d_bytes() >> 10, pcpu, ccpu, cab_topology_shared_cache(pcpu, ccpu),
           cfg.sample_rate);
    printf("probe: median of %d batches of %d cache-line round trips between the two CPUs, "
           "before / after each run\n\n", PROBE_BATCHES, PROBE_BATCH_TRIPS);

    /* rate[t][class][k]: events/s of kept runs; the limit (one core) in class 0 of its own */
    static double rate[T_COUNT][NCLASS][MAX_RUNS];
    static double probes[NCLASS][2 * MAX_RUNS * T_COUNT];
    int count[T_COUNT][NCLASS] = {{0}}, nprobes[NCLASS] = {0}, dropped = 0;
    for (int k = 0; k < runs; k++)
        for (int t = 0; t < T_COUNT; t++) {
            if (!want[t]) continue;
            Result res;
            if (t == T_LIMIT) {
                if (!timed_run(t, &cfg, n, pcpu, ccpu, &res)) {
                    fprintf(stderr, "cab_bench: limit: wrong store\n");
                    return 1;
                }
                printf("run %d %-10s %7.3f G ev/s %6.3f ns/ev  (one core, no consumer)\n", k + 1,
                       tname[t], res.rate / 1e9, 1e9 / res.rate);
                rate[t][0][count[t][0]++] = res.rate;
                continue;
            }
            cab_topology_bind_self(pcpu);
            double before = probe(ccpu);
            bool ok = timed_run(t, &cfg, n, pcpu, ccpu, &res);
            double after = probe(ccpu);
            if (!ok) {
                fprintf(stderr, "cab_bench: %s: wrong sum, events lost\n", tname[t]);
                return 1;
            }
            int cb = classify(before), ca = classify(after);
            printf("run %d %-10s %7.3f G ev/s %6.3f ns/ev  probes %5.0f / %5.0f ns (%s%s)  "
                   "blocks %llu, blocked %4.1f%%, consumer idle %4.1f%%",
                   k + 1, tname[t], res.rate / 1e9, 1e9 / res.rate, before, after,
                   class_name[cb], cb == ca ? "" : " -> moved, dropped",
                   (unsigned long long)res.st.blocks,
                   100.0 * (double)res.st.blocked_ns * 1e-9 / res.secs,
                   100.0 * (double)res.st.idle_ns * 1e-9 / res.secs);
            if (t == T_SAMPLE)
                printf("  analysed %.4f%% skipped %.2f%% lost %.2f%%",
                       100.0 * (double)res.st.consumed / (double)n,
                       100.0 * (double)res.st.skipped / (double)n,
                       100.0 * (double)res.st.lost / (double)n);
            printf("\n");
            if (cb == ca) {
                rate[t][cb][count[t][cb]++] = res.rate;
                probes[cb][nprobes[cb]++] = before;
                probes[cb][nprobes[cb]++] = after;
            } else {
                dropped++;
            }
        }

    double limit = 0;
    if (count[T_LIMIT][0]) limit = median(rate[T_LIMIT][0], count[T_LIMIT][0]);
    printf("\nMedians [min, max] of the runs kept, by placement (%d runs dropped: the probes "
           "before and after disagreed). ratio = median / the limit's median.\n\n", dropped);
    printf("| placement | transport | G events/s [min, max] | ns/event | ratio | runs | notes |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    if (count[T_LIMIT][0])
        print_row("one core", "limit", rate[T_LIMIT][0], count[T_LIMIT][0], limit,
                  "sequential stores, no consumer");
    for (int c = 0; c < NCLASS; c++) {
        if (!nprobes[c]) continue;
        double pm = median(probes[c], nprobes[c]);
        double med[T_COUNT] = {0};
        for (int t = 1; t < T_COUNT; t++)
            if (count[t][c]) {
                double tmp[MAX_RUNS];
                memcpy(tmp, rate[t][c], sizeof(double) * (size_t)count[t][c]);
                med[t] = median(tmp, count[t][c]);
            }
        for (int t = 1; t < T_COUNT; t++) {
            if (!count[t][c]) continue;
            char extra[96] = "";
            if (t == T_CAB && med[T_FFWD] > 0 && med[T_NWAY] > 0)
                snprintf(extra, sizeof extra, "probe %.0f ns; cab/ffwd %.2f, cab/nway %.2f", pm,
                         med[T_CAB] / med[T_FFWD], med[T_CAB] / med[T_NWAY]);
            else if (t == T_CAB)
                snprintf(extra, sizeof extra, "probe %.0f ns", pm);
            print_row(class_name[c], tname[t], rate[t][c], count[t][c], limit, extra);
        }
    }
    return 0;
usage:
    fprintf(stderr, "usage: cab_bench [-n events] [-r runs] [-s ring] [-c chunk] [-p cpu] "
                    "[-q cpu] [-t limit,cab,cabm,nway,ffwd,sample] [-x rate]\n"
                    "       cab_bench -P [-p cpu] [-q cpu]   (one round-trip probe: \"probe NS CLASS\")\n");
    return 2;
}
