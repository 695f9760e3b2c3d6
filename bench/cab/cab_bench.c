/* cab_bench.c: throughput of the CAB transports between two threads (CAB paper section 6.1 /
 * Figure 7 on this machine): events per second from a producer pushing 1..N to a consumer
 * that sums them, medians of repeated runs, with the transports interleaved (A B C A B C).
 *
 * The hypervisor moves the two vCPUs between physical cores (shared/notes/measuring.md), so
 * every timed run is framed by a cache-line ping-pong probe between the same two CPUs; a run
 * counts only if both probes put the pair in the same placement class, and results are
 * reported per class.
 *
 *   cab_bench [-n events] [-r runs] [-s ring] [-c chunk] [-p producer_cpu] [-q consumer_cpu]
 *             [-t cab,nway,ffwd,sample] [-x sample_rate]
 * Sizes take the -Xcab.size syntax ("2m", "128k"). Defaults: 2e8 events, 7 runs, 2 MiB
 * ring, chunk from hwloc, CPUs 0 and the partner hwloc picks for it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cab_api.h"

#define MAX_RUNS 64
#define PROBE_TRIPS 20000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------- */
/* Round-trip probe                                                        */
/* ---------------------------------------------------------------------- */

static _Alignas(64) uint64_t probe_line;
static int probe_cpu_b;

static void *probe_peer(void *arg) {
    (void)arg;
    cab_topology_bind_self(probe_cpu_b);
    for (uint64_t i = 1; i < 2 * PROBE_TRIPS; i += 2) {
        while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != i) {}
        __atomic_store_n(&probe_line, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Mean round trip in ns of a line bounced between the calling thread and [cpu_b]. */
static double probe(int cpu_b) {
    probe_cpu_b = cpu_b;
    __atomic_store_n(&probe_line, 0, __ATOMIC_RELAXED);
    pthread_t th;
    pthread_create(&th, NULL, probe_peer, NULL);
    /* Let the peer reach its CPU before timing: wait for one untimed round trip. */
    __atomic_store_n(&probe_line, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != 2) {}
    double t0 = now_s();
    for (uint64_t i = 3; i < 2 * PROBE_TRIPS; i += 2) {
        __atomic_store_n(&probe_line, i, __ATOMIC_RELEASE);
        while (__atomic_load_n(&probe_line, __ATOMIC_ACQUIRE) != i + 1) {}
    }
    double t = now_s() - t0;
    pthread_join(th, NULL);
    return t / (PROBE_TRIPS - 1) * 1e9;
}

/* Placement classes of measuring.md. */
static const char *const class_name[] = {"sibling", "near", "far", "very far"};
static int classify(double rt_ns) {
    if (rt_ns < 45) return 0;
    if (rt_ns < 150) return 1;
    if (rt_ns < 700) return 2;
    return 3;
}

/* ---------------------------------------------------------------------- */
/* One timed run                                                           */
/* ---------------------------------------------------------------------- */

enum { T_CAB, T_NWAY, T_FFWD, T_SAMPLE, T_COUNT };
static const char *const tname[] = {"cab", "nway", "ffwd", "cab-sample"};

typedef struct Run {
    CabRing *ring;
    int cpu;
    uint64_t sum;
    int ready;
} Run;

static void sum_events(void *ctx, const uint64_t *ev, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) s += ev[i];
    ((Run *)ctx)->sum += s;
}

static void *consumer_main(void *arg) {
    Run *r = arg;
    cab_topology_bind_self(r->cpu);
    __atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
    while (!cab_ring_done(r->ring)) {
        if (cab_consume(r->ring, sum_events, r, 0) == 0) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
    }
    return NULL;
}

/* The producer loops, one per transport, so that each uses its own inline fast path and
 * keeps the cursor where gcc can keep it (the struct is a local). */
__attribute__((noinline)) static void produce_cab(CabProducer *p, uint64_t n) {
    for (uint64_t i = 1; i <= n; i++) cab_push(p, i);
}
__attribute__((noinline)) static void produce_sample(CabProducer *p, uint64_t n) {
    for (uint64_t i = 1; i <= n; i++) cab_push_sampling(p, i);
}
__attribute__((noinline)) static void produce_nway(CabProducer *p, uint64_t n) {
    for (uint64_t i = 1; i <= n; i++) cab_nway_push(p, i);
}
__attribute__((noinline)) static void produce_ffwd(CabProducer *p, uint64_t n) {
    for (uint64_t i = 1; i <= n; i++) cab_ffwd_push(p, i);
}

/* Returns events/s, or a negative value on a failed check. */
static double timed_run(int t, const CabConfig *base, uint64_t n, int pcpu, int ccpu,
                        CabStats *st_out) {
    CabConfig c = *base;
    c.transport = t == T_NWAY ? CAB_TRANSPORT_NWAY : t == T_FFWD ? CAB_TRANSPORT_FFWD
                                                                  : CAB_TRANSPORT_CAB;
    c.mode = t == T_SAMPLE ? CAB_MODE_SAMPLING : CAB_MODE_EXHAUSTIVE;
    CabProducer p;
    const char *err;
    Run r = {0};
    r.cpu = ccpu;
    r.ring = cab_ring_new(&c, NULL, &p, &err);
    if (!r.ring) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
    cab_topology_bind_self(pcpu);
    pthread_t th;
    pthread_create(&th, NULL, consumer_main, &r);
    while (!__atomic_load_n(&r.ready, __ATOMIC_ACQUIRE)) {}
    double t0 = now_s();
    switch (t) {
    case T_CAB: produce_cab(&p, n); break;
    case T_SAMPLE: produce_sample(&p, n); break;
    case T_NWAY: produce_nway(&p, n); break;
    case T_FFWD: produce_ffwd(&p, n); break;
    }
    cab_close(&p);
    pthread_join(th, NULL);
    double dt = now_s() - t0;
    *st_out = cab_ring_stats(r.ring);
    cab_ring_free(r.ring);
    if (t != T_SAMPLE && r.sum != n * (n + 1) / 2) return -1; /* the work was not done */
    return (double)n / dt;
}

/* ---------------------------------------------------------------------- */
/* Main                                                                    */
/* ---------------------------------------------------------------------- */

static size_t size_arg(const char *s) {
    size_t v;
    const char *err;
    if (!cab_size_parse(s, &v, &err)) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    uint64_t n = 200000000;
    int runs = 7, pcpu = 0, ccpu = -1;
    bool want[T_COUNT] = {true, true, true, true};
    CabConfig cfg;
    cab_config_default(&cfg);
    cfg.sample_rate = 0.1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
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
                while (t < T_COUNT && strcmp(tok, tname[t]) && !(t == T_SAMPLE && !strcmp(tok, "sample"))) t++;
                if (t == T_COUNT) goto usage;
                want[t] = true;
            }
        } else goto usage;
    }
    if (runs < 1 || runs > MAX_RUNS) goto usage;
    if (ccpu < 0) ccpu = cab_topology_pick_partner(pcpu);
    if (ccpu < 0) {
        fprintf(stderr, "cab_bench: needs two CPUs\n");
        return 2;
    }
    const char *bad = cab_config_check(&cfg);
    if (bad) {
        fprintf(stderr, "%s\n", bad);
        return 2;
    }
    printf("cab_bench: %llu events/run, %d runs, ring %zu KiB, chunk %zu KiB, L1d %zu KiB, "
           "producer cpu %d, consumer cpu %d, sampling rate %g\n",
           (unsigned long long)n, runs, cfg.ring_bytes >> 10, cfg.chunk_bytes >> 10,
           cab_topology_l1d_bytes() >> 10, pcpu, ccpu, cfg.sample_rate);

    /* rate[t][class][k]: events/s of kept runs */
    static double rate[T_COUNT][4][MAX_RUNS];
    int count[T_COUNT][4] = {{0}}, dropped = 0;
    for (int k = 0; k < runs; k++)
        for (int t = 0; t < T_COUNT; t++) {
            if (!want[t]) continue;
            cab_topology_bind_self(pcpu);
            double before = probe(ccpu);
            CabStats st;
            double r = timed_run(t, &cfg, n, pcpu, ccpu, &st);
            double after = probe(ccpu);
            if (r < 0) {
                fprintf(stderr, "cab_bench: %s: wrong sum, events lost\n", tname[t]);
                return 1;
            }
            int cb = classify(before), ca = classify(after);
            printf("run %d %-10s %7.3f G ev/s  probes %6.0f / %6.0f ns (%s%s)  blocks %llu",
                   k + 1, tname[t], r / 1e9, before, after, class_name[cb],
                   cb == ca ? "" : " -> moved, dropped", (unsigned long long)st.blocks);
            if (t == T_SAMPLE)
                printf("  analysed %.4f%% skipped %.2f%% lost %.2f%%",
                       100.0 * (double)st.consumed / (double)n, 100.0 * (double)st.skipped / (double)n,
                       100.0 * (double)st.lost / (double)n);
            printf("\n");
            if (cb == ca) rate[t][cb][count[t][cb]++] = r;
            else dropped++;
        }

    printf("\nmedian [min, max] in G events/s by placement (runs kept; %d dropped: probes "
           "disagreed)\n", dropped);
    for (int c = 0; c < 4; c++)
        for (int t = 0; t < T_COUNT; t++) {
            int m = count[t][c];
            if (!m) continue;
            qsort(rate[t][c], (size_t)m, sizeof(double), cmp_double);
            double med = m % 2 ? rate[t][c][m / 2] : (rate[t][c][m / 2 - 1] + rate[t][c][m / 2]) / 2;
            printf("  %-9s %-10s %6.3f [%6.3f, %6.3f]  (%d runs)\n", class_name[c], tname[t],
                   med / 1e9, rate[t][c][0] / 1e9, rate[t][c][m - 1] / 1e9, m);
        }
    return 0;
usage:
    fprintf(stderr, "usage: cab_bench [-n events] [-r runs] [-s ring] [-c chunk] [-p cpu] "
                    "[-q cpu] [-t cab,nway,ffwd,sample] [-x rate]\n");
    return 2;
}
