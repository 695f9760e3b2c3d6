/* cab_analyzer.c: analyzer threads. A pool of N threads; each serves the rings registered
 * with it round-robin, as their only consumer (paper 3.3: one consumer thread may serve
 * several CABs, a CAB is only ever consumed by one thread).
 *
 * The threads are created with the raw pthread_create: this file does not include Boehm's
 * header, so GC_THREADS' redirection does not apply and the collector never knows them. It
 * must not: they never stop for a collection, so a consume function must never touch the
 * GC heap (events carry integers and ids, DESIGN.md). Their memory is malloc'ed.
 *
 * Registration and closing are rare (thread start and end), so they go through a mutex; the
 * steady state is lock-free: an analyzer only polls its own private array of rings and one
 * relaxed flag saying that registrations are waiting.
 *
 * Closing: the producer calls cab_close (flush + closed flag). Its analyzer notices the flag
 * on its next round, drains the residue (the "pending buffer queue" of the paper's 5.1 is
 * the ring itself: nothing is copied), calls the consumer's done function with the final
 * counters and frees the ring.
 *
 * Idle analyzers back off: pause, then sched_yield, then sleeps doubling up to 50 us, the
 * time a producer at ~1 G events/s needs to fill 1/40 of a 2 MiB ring, so a sleeping
 * analyzer wakes long before the producer has to block. The time spent backing off is the
 * rings' idle_ns (CabStats), measured only while idle. */
#include "cab_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Chunks an analyzer takes from one ring before moving to the next: round-robin fairness
 * without a per-chunk switch. */
#define ANALYZER_CHUNKS_PER_TURN 16
#define ANALYZER_SPINS 64
#define ANALYZER_YIELDS 16
#define ANALYZER_SLEEP_MAX_NS 50000

typedef struct Served {
    CabRing *ring; /* owned by the analyzer from registration until it frees it */
    CabConsumer c;
    uint64_t since; /* ns when the analyzer picked it up: idle time before is not its own */
} Served;

typedef struct Analyzer {
    pthread_t thread;
    CabAnalyzerPool *pool;
    int cpu; /* OS CPU to bind to, -1: none */
    /* Registrations not yet picked up: under [mu]. [waiting] is set (release) after adding
     * and read (relaxed, then under [mu]) by the thread, so the lock is taken only when
     * there is something to pick up. */
    pthread_mutex_t mu;
    Served *incoming;
    size_t nin, capin;
    uint32_t waiting;
    /* Rings served, private to the thread. */
    Served *rings;
    size_t n, cap;
    /* Registered and not yet finished: atomic, read by cab_analyzer_register to balance. */
    uint64_t load;
} Analyzer;

struct CabAnalyzerPool {
    int n;
    Analyzer *a;
    uint32_t stop; /* release store in shutdown, acquire load in the threads */
};

static bool grow(Served **v, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    Served *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return false;
    *v = nv;
    *cap = c;
    return true;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pick_up(Analyzer *a) {
    uint64_t t = now_ns();
    pthread_mutex_lock(&a->mu);
    if (grow(&a->rings, &a->cap, a->n + a->nin)) {
        for (size_t i = 0; i < a->nin; i++) a->incoming[i].since = t;
        memcpy(a->rings + a->n, a->incoming, a->nin * sizeof *a->incoming);
        a->n += a->nin;
        a->nin = 0;
        __atomic_store_n(&a->waiting, 0, __ATOMIC_RELAXED); /* under mu */
    }
    pthread_mutex_unlock(&a->mu);
}

static void backoff(unsigned idle) {
    if (idle < ANALYZER_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (idle < ANALYZER_SPINS + ANALYZER_YIELDS) {
        sched_yield();
    } else {
        unsigned k = idle - ANALYZER_SPINS - ANALYZER_YIELDS;
        long ns = k < 6 ? 1000L << k : ANALYZER_SLEEP_MAX_NS;
        if (ns > ANALYZER_SLEEP_MAX_NS) ns = ANALYZER_SLEEP_MAX_NS;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
}

static void *analyzer_main(void *arg) {
    Analyzer *a = arg;
    if (a->cpu >= 0) {
        int rc = cab_topology_bind_self(a->cpu);
        if (rc) fprintf(stderr, "cab: cannot bind analyzer to cpu %d: %s\n", a->cpu, strerror(rc));
    }
    unsigned idle = 0;
    uint64_t idle_mark = 0; /* while idle: end of the time already credited to the rings */
    for (;;) {
        if (__atomic_load_n(&a->waiting, __ATOMIC_ACQUIRE)) pick_up(a);
        size_t progress = 0;
        for (size_t i = 0; i < a->n;) {
            Served *s = &a->rings[i];
            progress += cab_consume(s->ring, s->c.consume, s->c.ctx, ANALYZER_CHUNKS_PER_TURN);
            if (!cab_ring_done(s->ring)) {
                i++;
                continue;
            }
            CabStats st = cab_ring_stats(s->ring);
            if (s->c.done) s->c.done(s->c.ctx, &st);
            cab_ring_free(s->ring);
            *s = a->rings[--a->n];
            __atomic_fetch_sub(&a->load, 1, __ATOMIC_RELEASE); /* pairs with shutdown's acquire */
            progress++;
        }
        if (progress) {
            idle = 0;
            continue;
        }
        if (__atomic_load_n(&a->pool->stop, __ATOMIC_ACQUIRE) && a->n == 0 &&
            __atomic_load_n(&a->load, __ATOMIC_ACQUIRE) == 0)
            break;
        /* Idle time (CabStats.idle_ns): from the end of the first round that found nothing
         * to the end of the last backoff, credited to every ring served meanwhile after
         * each backoff. Clock reads only while idle; a busy analyzer reads none. */
        if (idle == 0) idle_mark = now_ns();
        backoff(idle++);
        uint64_t t = now_ns();
        for (size_t i = 0; i < a->n; i++) {
            Served *s = &a->rings[i];
            uint64_t from = s->since > idle_mark ? s->since : idle_mark;
            if (t > from) cab_ring_add_idle_ns(s->ring, t - from);
        }
        idle_mark = t;
    }
    return NULL;
}

CabAnalyzerPool *cab_analyzer_start(int nthreads, const int *cpus, const char **err) {
    const char *dummy;
    if (!err) err = &dummy;
    if (nthreads < 1) {
        *err = "cab: analyzer pool needs at least one thread";
        return NULL;
    }
    CabAnalyzerPool *pool = calloc(1, sizeof *pool);
    if (!pool || !(pool->a = calloc((size_t)nthreads, sizeof *pool->a))) {
        free(pool);
        *err = "cab: out of memory for the analyzer pool";
        return NULL;
    }
    for (int i = 0; i < nthreads; i++) {
        Analyzer *a = &pool->a[i];
        a->pool = pool;
        a->cpu = cpus ? cpus[i] : -1;
        pthread_mutex_init(&a->mu, NULL);
        int rc = pthread_create(&a->thread, NULL, analyzer_main, a);
        if (rc != 0) {
            pool->n = i;
            cab_analyzer_shutdown(pool);
            *err = "cab: cannot create an analyzer thread";
            return NULL;
        }
        pool->n = i + 1;
    }
    return pool;
}

int cab_analyzer_register(CabAnalyzerPool *pool, CabRing *r, const CabConsumer *c, int which) {
    if (which < 0 || which >= pool->n) {
        which = 0;
        for (int i = 1; i < pool->n; i++)
            if (__atomic_load_n(&pool->a[i].load, __ATOMIC_RELAXED) <
                __atomic_load_n(&pool->a[which].load, __ATOMIC_RELAXED))
                which = i;
    }
    Analyzer *a = &pool->a[which];
    __atomic_fetch_add(&a->load, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&a->mu);
    if (!grow(&a->incoming, &a->capin, a->nin + 1)) {
        fprintf(stderr, "cab: out of memory registering a ring\n");
        abort();
    }
    a->incoming[a->nin++] = (Served){r, *c, 0}; /* since: set at pick-up */
    /* The mutex orders the ring's creation (plain stores) before the analyzer's use. */
    __atomic_store_n(&a->waiting, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&a->mu);
    return which;
}

void cab_analyzer_shutdown(CabAnalyzerPool *pool) {
    if (!pool) return;
    __atomic_store_n(&pool->stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < pool->n; i++) {
        Analyzer *a = &pool->a[i];
        pthread_join(a->thread, NULL);
        pthread_mutex_destroy(&a->mu);
        free(a->incoming);
        free(a->rings);
    }
    free(pool->a);
    free(pool);
}
