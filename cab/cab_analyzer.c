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
 * Shards (CabConsumer.nshards >= 2): the ring's analyzer (the owner) still is its only
 * consumer, but copies each chunk out (cab_consume into a malloc'ed ShardBuf, so the ring is
 * cleared in order and the producer side is unchanged), pushes the copy to one SPSC queue
 * per other shard, then analyses shard 0 itself. Shard j's analyzer (the j-th next thread)
 * pops the copies of its queue in order and analyses shard j. The last shard to finish a
 * copy frees it (refs). Memory ordering: the owner's release of a queue's [tail] after
 * storing the slot pairs with the helper's acquire; the helper's release of [head] after
 * analysing a copy pairs with the owner's acquire, so when every head has caught up with its
 * tail every shard's analysis of every event happened before, and the owner may call done
 * (whose caller then reads all shards' states). A full queue (SHARD_QUEUE copies ahead)
 * stops the owner from taking chunks, so a slow shard backs the producer up through the
 * ring as a slow analyzer does. The owner then sets [finished] (release); a helper that
 * acquires it drops its entry; the last holder of the Sharded frees it.
 *
 * Idle analyzers back off: pause, then sched_yield, then sleeps doubling up to
 * CAB_ANALYZER_SLEEP_NS (50 us), the time a producer at ~1 G events/s needs to fill a fifth of a
 * 2 MiB ring, so a sleeping analyzer wakes long before the producer has to block. The time
 * spent backing off is the rings' idle_ns (CabStats), measured only while idle.
 *
 * Idle sleeps: when every ring an analyzer serves has a low producer share (a sampled
 * producer, -Xsample.mode=code: at -Xprofile.always's 0.2% it emits events in 1 tick of
 * 500), the sleeps go on doubling up to the least of the rings' idle_sleep_ns (a quarter of
 * the ring at the share's peak rate, at most CAB_IDLE_SLEEP_MAX_NS, 4 ms): polling every 50
 * us, an always-on analyzer woke 16,000 times a second to find nothing (4,881 sleeps in a
 * 0.3 s run of bench/suite/richards.lua), keeping the second CPU busy for the program's
 * whole run. A sleep above CAB_ANALYZER_SLEEP_NS waits on the pool's futex word [wake] instead
 * of nanosleep, so that what must not wait that long ends it: a registration or hand-over
 * (a new ring may have a share of 1), cab_close (the program's exit waits for the drain),
 * the shutdown. Each of those changes its state first, then adds to [wake]
 * (seq_cst) and wakes; the analyzer reads [wake] (seq_cst) before each round and sleeps
 * only if it still holds that value (FUTEX_WAIT compares atomically), so a change made
 * after its read is either seen by the round or ends the sleep at once. */
#include "cab_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Chunks an analyzer takes from one ring before moving to the next: round-robin fairness
 * without a per-chunk switch. */
#define ANALYZER_CHUNKS_PER_TURN 16
#define ANALYZER_SPINS 64
#define ANALYZER_YIELDS 16

#define SHARD_QUEUE 8 /* copies in flight per helper shard (power of two) */

typedef struct ShardBuf {
    uint32_t refs; /* shards still to analyse it: atomic, the last frees it */
    size_t n;
    uint64_t ev[]; /* a chunk's events */
} ShardBuf;

typedef struct ShardQueue { /* SPSC: the owner pushes, the shard's analyzer pops */
    ShardBuf *slot[SHARD_QUEUE];
    _Alignas(64) uint64_t tail; /* pushed: owner's release store, helper's acquire load */
    _Alignas(64) uint64_t head; /* analysed: helper's release store, owner's acquire load */
    uint64_t chunks, ns;        /* shard's counters: the helper's, read by the owner after
                                   acquiring head == tail */
} ShardQueue;

typedef struct Sharded {
    CabConsumer c;
    size_t cap;         /* events per copy: a chunk */
    uint32_t finished;  /* owner's release once done was called; helpers acquire it */
    uint32_t refs;      /* atomic: owner + helpers still holding it */
    uint64_t chunks0, ns0; /* shard 0's counters (the owner's) */
    ShardQueue q[CAB_MAX_SHARDS]; /* q[0] unused: shard 0 runs on the owner */
} Sharded;

typedef struct Served {
    CabRing *ring; /* owned by the analyzer from registration until it frees it; NULL: a
                      helper's entry for shard [shard] of [sh] */
    CabConsumer c;
    uint64_t since; /* ns when the analyzer picked it up: idle time before is not its own */
    Sharded *sh;    /* sharded analysis, else NULL */
    unsigned shard;
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
    int index;
    /* Faults (cab_analyzer_set_faults, analyzer 0 only): chunks taken so far, whether the
     * stall is still to come; [dead] (under mu, and atomic for the balancing read) once the
     * thread has stopped and handed its rings over. */
    uint64_t chunks;
    bool stalled;
    uint32_t dead;
} Analyzer;

struct CabAnalyzerPool {
    int n; /* threads started; atomic (a spare may be started by a dying analyzer) */
    int cap; /* slots in a: n, plus one spare */
    Analyzer *a;
    uint32_t stop; /* release store in shutdown, acquire load in the threads */
    uint32_t wake; /* futex word of the long idle sleeps: "Idle sleeps" above */
    CabAnalyzerFaults faults; /* set before any ring is registered */
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

void cab_wake_word(uint32_t *w) {
    __atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void wake_pool(CabAnalyzerPool *pool) { cab_wake_word(&pool->wake); }

/* The longest idle sleep for [a]'s rings (see "Idle sleeps"): a shard helper's entry polls
 * at the shortest pace, as its owner's producer may have a share of 1. */
static uint64_t sleep_cap(const Analyzer *a) {
    uint64_t cap = CAB_IDLE_SLEEP_MAX_NS;
    for (size_t i = 0; i < a->n; i++) {
        const Served *s = &a->rings[i];
        uint64_t ns = s->ring ? s->ring->idle_sleep_ns : CAB_ANALYZER_SLEEP_NS;
        if (ns < cap) cap = ns;
    }
    return cap;
}

/* [seen]: the pool's [wake] as read before the round that found nothing. True when it slept. */
static bool backoff(Analyzer *a, unsigned idle, uint32_t seen) {
    if (idle < ANALYZER_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return false;
    }
    if (idle < ANALYZER_SPINS + ANALYZER_YIELDS) {
        sched_yield();
        return false;
    }
    unsigned k = idle - ANALYZER_SPINS - ANALYZER_YIELDS; /* sleeps double from 1 us */
    uint64_t cap = sleep_cap(a);
    uint64_t ns = k < 12 ? 1000u << k : cap;
    if (ns > cap) ns = cap;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    if (ns <= CAB_ANALYZER_SLEEP_NS)
        nanosleep(&ts, NULL);
    else /* relative timeout; EAGAIN (woken already), EINTR and ETIMEDOUT all just end it */
        syscall(SYS_futex, &a->pool->wake, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    return true;
}

static void *analyzer_main(void *arg);

/* The live analyzer other than [self] with the fewest rings, -1 if none. */
static int least_loaded(CabAnalyzerPool *pool, int self) {
    int which = -1, n = __atomic_load_n(&pool->n, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        if (i == self || __atomic_load_n(&pool->a[i].dead, __ATOMIC_ACQUIRE)) continue;
        if (which < 0 || __atomic_load_n(&pool->a[i].load, __ATOMIC_RELAXED) <
                             __atomic_load_n(&pool->a[which].load, __ATOMIC_RELAXED))
            which = i;
    }
    return which;
}

static void init_slot(CabAnalyzerPool *pool, int i, int cpu) {
    Analyzer *a = &pool->a[i];
    a->pool = pool;
    a->index = i;
    a->cpu = cpu;
    pthread_mutex_init(&a->mu, NULL);
}

static bool start_thread(CabAnalyzerPool *pool, int i) {
    if (pthread_create(&pool->a[i].thread, NULL, analyzer_main, &pool->a[i]) != 0) return false;
    __atomic_store_n(&pool->n, i + 1, __ATOMIC_RELEASE);
    return true;
}

/* Add [k] rings to analyzer [to]'s registrations (under its mutex, which orders the rings'
 * state before the new consumer's use). False if [to] has stopped (died, or ended at
 * shutdown): the caller picks another. */
static bool hand_to(Analyzer *to, const Served *v, size_t k) {
    pthread_mutex_lock(&to->mu);
    if (to->dead) {
        pthread_mutex_unlock(&to->mu);
        return false;
    }
    if (!grow(&to->incoming, &to->capin, to->nin + k)) {
        fprintf(stderr, "cab: out of memory registering a ring\n");
        abort();
    }
    size_t rings = 0; /* [load] counts rings, not shard helpers' entries */
    for (size_t i = 0; i < k; i++) {
        to->incoming[to->nin] = v[i];
        to->incoming[to->nin++].since = 0;
        rings += v[i].ring != NULL;
        if (v[i].ring) __atomic_store_n(&v[i].ring->wake, &to->pool->wake, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&to->load, rings, __ATOMIC_RELAXED);
    __atomic_store_n(&to->waiting, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&to->mu);
    wake_pool(to->pool); /* it may sleep long: "Idle sleeps" */
    return true;
}

/* -Xtest.analyzer_die: this analyzer stops for good, between two chunks (so it is no
 * ring's consumer mid-chunk). From now on registrations skip it; the rings it served or had
 * yet to pick up move to the live analyzer with the fewest rings, which becomes their only
 * consumer and goes on from where this one stopped: nothing is lost or read twice, and the
 * counters still prove it (produced == consumed). With no live analyzer left, the pool's
 * spare thread is started to take them: otherwise a producer on a full ring, and the
 * shutdown, would wait forever. */
static void die(Analyzer *a) {
    CabAnalyzerPool *pool = a->pool;
    pthread_mutex_lock(&a->mu);
    __atomic_store_n(&a->dead, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&a->mu);
    pick_up(a); /* no registration can come in any more */
    size_t k = a->n;
    int to;
    for (;;) {
        to = least_loaded(pool, a->index);
        if (to < 0) {
            /* The spare gets the rings before it starts: a thread started with nothing to do
             * during the shutdown would end at once. */
            to = __atomic_load_n(&pool->n, __ATOMIC_ACQUIRE);
            if (to < pool->cap) {
                init_slot(pool, to, a->cpu);
                hand_to(&pool->a[to], a->rings, k);
                if (start_thread(pool, to)) break;
            }
            fprintf(stderr, "cab: analyzer %d cannot stop: no analyzer to take its rings\n", a->index);
            abort();
        }
        if (hand_to(&pool->a[to], a->rings, k)) break;
    }
    fprintf(stderr, "cab: analyzer %d stopped after %llu chunks (-Xtest.analyzer_die); its %zu ring(s) moved to analyzer %d\n",
            a->index, (unsigned long long)a->chunks, k, to);
    size_t rings = 0;
    for (size_t i = 0; i < k; i++) rings += a->rings[i].ring != NULL;
    a->n = 0;
    __atomic_fetch_sub(&a->load, rings, __ATOMIC_RELEASE);
    pthread_exit(NULL);
}

/* ---- Shards (file header) ---- */

static void buf_release(ShardBuf *b) {
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) free(b);
}

static void sharded_release(Sharded *sh) {
    if (__atomic_sub_fetch(&sh->refs, 1, __ATOMIC_ACQ_REL) == 0) free(sh);
}

static void copy_into(void *ctx, const uint64_t *ev, size_t n) {
    ShardBuf *b = ctx;
    memcpy(b->ev + b->n, ev, n * sizeof *ev);
    b->n += n;
}

/* Owner: take up to [max] chunks, each copied out, queued for the other shards and analysed
 * for shard 0 here. Stops early when a queue is full. */
static size_t consume_sharded(Served *s, size_t max) {
    Sharded *sh = s->sh;
    unsigned n = sh->c.nshards;
    size_t total = 0;
    for (size_t k = 0; k < max; k++) {
        for (unsigned j = 1; j < n; j++)
            if (sh->q[j].tail - __atomic_load_n(&sh->q[j].head, __ATOMIC_ACQUIRE) >= SHARD_QUEUE) return total;
        ShardBuf *b = malloc(sizeof *b + sh->cap * sizeof(uint64_t));
        if (b == NULL) {
            fprintf(stderr, "cab: out of memory for a shard's chunk\n");
            abort();
        }
        b->n = 0;
        size_t got = cab_consume(s->ring, copy_into, b, 1);
        if (got == 0 || b->n == 0) {
            free(b);
            if (got == 0) break;
            total += got;
            continue;
        }
        b->refs = n;
        for (unsigned j = 1; j < n; j++) {
            ShardQueue *q = &sh->q[j];
            q->slot[q->tail % SHARD_QUEUE] = b;
            __atomic_store_n(&q->tail, q->tail + 1, __ATOMIC_RELEASE); /* pairs with the helper's acquire */
        }
        uint64_t t0 = now_ns();
        sh->c.consume_shard(sh->c.ctx, 0, b->ev, b->n);
        sh->ns0 += now_ns() - t0;
        sh->chunks0++;
        buf_release(b);
        total += got;
    }
    return total;
}

/* Owner: has every shard analysed every copy? */
static bool shards_caught_up(const Sharded *sh) {
    for (unsigned j = 1; j < sh->c.nshards; j++)
        if (__atomic_load_n(&sh->q[j].head, __ATOMIC_ACQUIRE) != sh->q[j].tail) return false;
    return true;
}

/* Helper: analyse what is queued for shard s->shard. Sets [*gone] once the owner is finished
 * and nothing is left (the entry is dropped). */
static size_t help_shard(Served *s, bool *gone) {
    Sharded *sh = s->sh;
    ShardQueue *q = &sh->q[s->shard];
    bool finished = __atomic_load_n(&sh->finished, __ATOMIC_ACQUIRE); /* before the tail: see below */
    uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE), head = q->head;
    size_t done = 0;
    for (; head < tail && done < ANALYZER_CHUNKS_PER_TURN; done++) {
        ShardBuf *b = q->slot[head % SHARD_QUEUE];
        uint64_t t0 = now_ns();
        sh->c.consume_shard(sh->c.ctx, s->shard, b->ev, b->n);
        q->ns += now_ns() - t0;
        q->chunks++;
        buf_release(b);
        __atomic_store_n(&q->head, ++head, __ATOMIC_RELEASE); /* pairs with the owner's acquire */
    }
    /* The owner finishes only after every head caught up with its tail, and pushes nothing
     * after: so finished read before a tail that this shard has reached means nothing more
     * will come. */
    *gone = finished && head == tail;
    return done;
}

/* Count the chunks [a] took (faults only: one per turn at most), stall or die when they
 * say so. Counted from what cab_consume returned, not from the ring's chunk counter, which
 * the producer may be updating (-Xcab.full=self: it belongs to whoever holds the consumer
 * side). */
static void faults_after_consume(Analyzer *a, uint64_t took) {
    const CabAnalyzerFaults *f = &a->pool->faults;
    a->chunks += took;
    if (f->stall_ms && !a->stalled && a->chunks > 0) {
        a->stalled = true;
        struct timespec ts = {(time_t)(f->stall_ms / 1000), (long)(f->stall_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (f->die_after && a->chunks >= f->die_after) die(a);
}

static CabPhaseFn phase_observer; /* cab_analyzer_set_phase_observer; read once per thread */

void cab_analyzer_set_phase_observer(CabPhaseFn fn) { phase_observer = fn; }

/* The phase observer's bookkeeping: busy (rounds with progress) and idle phases alternate;
 * a phase is reported when it ends, timed from the start of its first round to the start of
 * the round that ended it, so consecutive phases share their boundary. */
typedef struct Phase {
    CabPhaseFn fn;   /* NULL: not observed, nothing below is used */
    int busy;
    uint64_t t0;     /* start of the current phase */
    uint64_t chunks; /* progress in the current busy phase */
} Phase;

static void phase_round(Phase *ph, int index, uint64_t round_t0, size_t progress) {
    int busy = progress != 0;
    if (busy != ph->busy) {
        ph->fn(index, ph->busy, ph->t0, round_t0, ph->chunks);
        ph->busy = busy;
        ph->t0 = round_t0;
        ph->chunks = 0;
    }
    ph->chunks += progress;
}

static void *analyzer_main(void *arg) {
    Analyzer *a = arg;
    if (a->cpu >= 0) {
        int rc = cab_topology_bind_self(a->cpu);
        if (rc) fprintf(stderr, "cab: cannot bind analyzer to cpu %d: %s\n", a->cpu, strerror(rc));
    }
    unsigned idle = 0;
    uint64_t idle_mark = 0; /* while idle: end of the time already credited to the rings */
    Phase ph = {phase_observer, 0, 0, 0};
    if (ph.fn) {
        ph.fn(a->index, -1, 0, 0, 0);
        ph.t0 = now_ns();
    }
    for (;;) {
        uint32_t seen = __atomic_load_n(&a->pool->wake, __ATOMIC_SEQ_CST); /* "Idle sleeps" */
        if (__atomic_load_n(&a->waiting, __ATOMIC_ACQUIRE)) pick_up(a);
        uint64_t round_t0 = ph.fn ? now_ns() : 0;
        size_t progress = 0;
        for (size_t i = 0; i < a->n;) {
            Served *s = &a->rings[i];
            if (s->ring == NULL) { /* a shard of another analyzer's ring */
                bool gone = false;
                progress += help_shard(s, &gone);
                if (!gone) {
                    i++;
                    continue;
                }
                sharded_release(s->sh);
                *s = a->rings[--a->n];
                progress++;
                continue;
            }
            bool faulty = a->index == 0 && (a->pool->faults.stall_ms || a->pool->faults.die_after);
            /* With faults, one chunk at a time: "dies after N chunks" is exact. The clock is
             * read around each turn (busy_ns): two reads per ring and round, nothing per chunk. */
            uint64_t t0 = now_ns();
            size_t max = faulty ? 1 : ANALYZER_CHUNKS_PER_TURN;
            size_t got = s->sh ? consume_sharded(s, max) : cab_consume(s->ring, s->c.consume, s->c.ctx, max);
            if (got) cab_ring_add_busy_ns(s->ring, now_ns() - t0);
            progress += got;
            if (faulty) faults_after_consume(a, got != 0); /* max 1: a chunk or nothing */
            if (!cab_ring_done(s->ring) || (s->sh && !shards_caught_up(s->sh))) {
                i++;
                continue;
            }
            CabStats st = cab_ring_stats(s->ring);
            if (s->sh) {
                Sharded *sh = s->sh;
                st.nshards = sh->c.nshards;
                st.shard_chunks[0] = sh->chunks0;
                st.shard_ns[0] = sh->ns0;
                for (unsigned j = 1; j < sh->c.nshards; j++) {
                    st.shard_chunks[j] = sh->q[j].chunks;
                    st.shard_ns[j] = sh->q[j].ns;
                }
            }
            if (s->c.done) s->c.done(s->c.ctx, &st);
            cab_ring_free(s->ring);
            if (s->sh) {
                __atomic_store_n(&s->sh->finished, 1, __ATOMIC_RELEASE); /* pairs with help_shard */
                sharded_release(s->sh);
            }
            *s = a->rings[--a->n];
            __atomic_fetch_sub(&a->load, 1, __ATOMIC_RELEASE); /* pairs with shutdown's acquire */
            progress++;
        }
        if (ph.fn) phase_round(&ph, a->index, round_t0, progress);
        if (progress) {
            idle = 0;
            continue;
        }
        if (__atomic_load_n(&a->pool->stop, __ATOMIC_ACQUIRE) && a->n == 0 &&
            __atomic_load_n(&a->load, __ATOMIC_ACQUIRE) == 0) {
            /* Ending: refuse hand-overs from now on (under mu, where hand_to looks), or a
             * ring handed over by an analyzer dying during the shutdown would be left
             * unread. */
            pthread_mutex_lock(&a->mu);
            bool end = a->nin == 0;
            if (end) __atomic_store_n(&a->dead, 1, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&a->mu);
            if (end) {
                if (ph.fn) ph.fn(a->index, ph.busy, ph.t0, now_ns(), ph.chunks);
                break;
            }
        }
        /* Idle time (CabStats.idle_ns): from the end of the first round that found nothing
         * to the end of the last backoff, credited to every ring served meanwhile after
         * each backoff. Clock reads for it only while idle; a busy analyzer reads the clock only
         * around each turn that found something (busy_ns). */
        if (idle == 0) idle_mark = now_ns();
        bool slept = backoff(a, idle++, seen);
        uint64_t t = now_ns();
        for (size_t i = 0; i < a->n; i++) {
            Served *s = &a->rings[i];
            if (s->ring == NULL) continue; /* a shard's entry */
            uint64_t from = s->since > idle_mark ? s->since : idle_mark;
            if (t > from) cab_ring_add_idle_ns(s->ring, t - from);
            s->ring->idle_sleeps += slept;
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
    /* One slot more than asked: the spare a dying analyzer starts (-Xtest.analyzer_die). */
    if (!pool || !(pool->a = calloc((size_t)nthreads + 1, sizeof *pool->a))) {
        free(pool);
        *err = "cab: out of memory for the analyzer pool";
        return NULL;
    }
    pool->cap = nthreads + 1;
    for (int i = 0; i < nthreads; i++) {
        init_slot(pool, i, cpus ? cpus[i] : -1);
        if (!start_thread(pool, i)) {
            cab_analyzer_shutdown(pool);
            *err = "cab: cannot create an analyzer thread";
            return NULL;
        }
    }
    return pool;
}

void cab_analyzer_set_faults(CabAnalyzerPool *pool, const CabAnalyzerFaults *f) { pool->faults = *f; }

int cab_analyzer_register(CabAnalyzerPool *pool, CabRing *r, const CabConsumer *c, int which) {
    int n = __atomic_load_n(&pool->n, __ATOMIC_ACQUIRE);
    unsigned nshards = c->nshards > 1 ? c->nshards : 1;
    if (nshards > CAB_MAX_SHARDS || (int)nshards > n || (nshards > 1 && c->consume_shard == NULL)) return -1;
    if (which < 0 || which >= n) which = least_loaded(pool, -1);
    Served one = {r, *c, 0, NULL, 0}; /* since: set at pick-up */
    if (nshards > 1) {
        Sharded *sh = calloc(1, sizeof *sh);
        if (sh == NULL) {
            fprintf(stderr, "cab: out of memory registering a ring\n");
            abort();
        }
        sh->c = *c;
        sh->cap = cab_ring_config(r)->chunk_bytes / 8;
        sh->refs = nshards;
        one.sh = sh;
    } else {
        /* The producer may analyse its full ring with the same function (CAB_FULL_SELF and
         * ADAPTIVE); set before hand_to's mutex publishes the ring to the analyzer. A
         * sharded ring's producer never does: its chunks go to every shard. */
        cab_ring_set_self(r, c->consume, c->ctx);
    }
    /* A dead analyzer (-Xtest.analyzer_die) refuses: try the live one with the fewest rings
     * (there is always one: a dying analyzer hands over before it leaves). */
    while (which < 0 || !hand_to(&pool->a[which], &one, 1)) which = least_loaded(pool, -1);
    /* Shard j on the j-th next analyzer. Helpers' entries do not count in [load] (it counts
     * rings, for balancing and the shutdown's drain); a helper ends only once its entries are
     * gone, i.e. after the owner finished. */
    for (unsigned j = 1; j < nshards; j++) {
        Served help = {NULL, *c, 0, one.sh, j};
        Analyzer *to = &pool->a[(which + (int)j) % n];
        pthread_mutex_lock(&to->mu);
        bool ok = !to->dead && grow(&to->incoming, &to->capin, to->nin + 1);
        if (ok) {
            to->incoming[to->nin++] = help;
            __atomic_store_n(&to->waiting, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&to->mu);
        if (!ok) {
            fprintf(stderr, "cab: cannot hand shard %u to analyzer %d (stopped, or out of memory)\n", j,
                    (which + (int)j) % n);
            abort();
        }
    }
    if (nshards > 1) wake_pool(pool);
    return which;
}

void cab_analyzer_shutdown(CabAnalyzerPool *pool) {
    if (!pool) return;
    __atomic_store_n(&pool->stop, 1, __ATOMIC_RELEASE);
    wake_pool(pool);
    /* pool->n is read again after each join: a dying analyzer may have started the spare
     * before it ended. */
    for (int i = 0; i < __atomic_load_n(&pool->n, __ATOMIC_ACQUIRE); i++) {
        Analyzer *a = &pool->a[i];
        pthread_join(a->thread, NULL);
        pthread_mutex_destroy(&a->mu);
        free(a->incoming);
        free(a->rings);
    }
    free(pool->a);
    free(pool);
}
