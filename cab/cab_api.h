/* cab_api.h: the CAB module's one public header: rings of 64-bit events between a program
 * thread (producer) and an analyzer thread (consumer), the comparison transports, analyzer
 * threads and the cache topology. Includes only <stdint.h>, <stddef.h>, <stdbool.h>: atomics
 * are gcc's __atomic builtins, which need no header and work on plain uint64_t words.
 *
 * Words used throughout (defined once here):
 *   slot      one 64-bit word of ring memory; holds CLEAR (free), an event, or MAGIC
 *   chunk     chunk_bytes/8 consecutive slots; the consumer's unit of work (CAB paper 3.1.2)
 *   guard     the first slot of chunk n+2: the consumer takes chunk n only when the guard
 *             holds an event, i.e. the producer is a whole chunk ahead
 *   resume distance   how many chunks ahead of its blocked slot a producer polls before it
 *             resumes after finding the ring full (cab_ring.c, "Resume distance")
 *   residue   events produced but not yet consumable because the producer has not reached
 *             the guard; cab_flush makes them consumable
 *   absolute position   number of events a side has passed since creation (never wraps)
 *
 * Threads: a CabProducer is used by one thread at a time (the producer); the consume
 * functions by one thread at a time (the consumer). Nothing here touches the GC heap and the
 * ring memory is outside it (malloc and mmap), so analyzer threads need no GC registration. */
#ifndef CAB_API_H
#define CAB_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ====================================================================== */
/* Events                                                                  */
/* ====================================================================== */

/* The two reserved words. CLEAR marks a free slot (the consumer writes it after reading);
 * MAGIC marks the end of the ring (the slot after the last one) and is never an event.
 * Grep CAB_RESERVED if you change either: events/ev_api.h must never encode them. */
#define CAB_CLEAR ((uint64_t)0)
#define CAB_MAGIC (~(uint64_t)0)

/* True if [x] may be pushed: anything but CLEAR and MAGIC. */
static inline bool cab_event_valid(uint64_t x) { return x != CAB_CLEAR && x != CAB_MAGIC; }

/* ====================================================================== */
/* Configuration                                                           */
/* ====================================================================== */

typedef enum CabTransport {
    CAB_TRANSPORT_CAB,  /* the CAB ring (paper section 3.1): slot handshake, chunked consumer */
    CAB_TRANSPORT_NWAY, /* N-way buffering: whole buffers handed over by a per-buffer flag */
    CAB_TRANSPORT_FFWD, /* FastForward: slot by slot, dangerous/safe distance 2/6 lines */
} CabTransport;

typedef enum CabMode {
    CAB_MODE_EXHAUSTIVE, /* every event analysed; the producer blocks when the ring is full */
    CAB_MODE_SAMPLING,   /* the producer never blocks; the consumer samples bursts (CAB only) */
} CabMode;

/* Limits. Grep CAB_LIMITS if you change one: cab_config_check states each in its message. */
#define CAB_MIN_CHUNK_BYTES ((size_t)4096)          /* one page: smaller chunks make the
                                                       consumer synchronise too often */
#define CAB_MIN_CHUNKS 3                            /* consumer guard is chunk n+2 */
#define CAB_MAX_RING_BYTES ((size_t)1 << 34)        /* 16 GiB: a sanity bound, not a need */
#define CAB_DEFAULT_RING_BYTES ((size_t)2 << 20)    /* 2 MiB, the paper's default */
#define CAB_FALLBACK_CHUNK_BYTES ((size_t)128 << 10) /* 4 x 32 KiB L1d without hwloc */
#define CAB_DEFAULT_BURST_BYTES ((size_t)64)        /* one cache line per sampled chunk */
#define CAB_MAX_SHARDS 8                            /* CabConsumer.nshards */

/* What an exhaustive producer does when its ring is full (deferred-methods paper, section 4:
 * thread-pool, synchronous and adaptive processing; cab_ring.c, "Full ring"). */
typedef enum CabFull {
    CAB_FULL_BLOCK,    /* wait for the ring's consumer to free room */
    CAB_FULL_SELF,     /* analyse the ring's oldest chunks itself, on its own thread, while
                          the consumer is not at it */
    CAB_FULL_ADAPTIVE, /* analyse itself only when waiting is worse: the consumer has not
                          freed room within the spin, is not at this ring, and no core is
                          idle (so it cannot be running soon); wait otherwise */
} CabFull;

typedef struct CabConfig {
    CabTransport transport;
    CabMode mode;
    size_t ring_bytes;   /* a multiple of chunk_bytes, >= CAB_MIN_CHUNKS chunks; FFWD: a
                            power of two */
    size_t chunk_bytes;  /* power of two, >= CAB_MIN_CHUNK_BYTES */
    size_t burst_bytes;  /* sampling: the unit chosen or skipped (chunks are cut into
                            bursts of this size); multiple of 8 in [8, chunk_bytes] */
    double sample_rate;  /* sampling: fraction of the bursts analysed, each chosen at random,
                            in (0, 1]; at 1 every event is read */
    CabFull full;        /* exhaustive mode, when the ring is full; self and adaptive need
                            the consume function (cab_analyzer_register sets it) */
    double producer_share; /* the most of a fully instrumented program's event rate the
                            producer reaches, in (0, 1] (0: 1): -Xsample.mode=code's rate.
                            An idle analyzer polls a ring of a low share less often
                            (cab_analyzer.c, "Idle sleeps"): a producer must never emit
                            faster than its share says */
} CabConfig;

/* Fill [cfg] with the defaults: CAB transport, exhaustive, 2 MiB ring, chunk = 4 x L1d from
 * hwloc (128 KiB if unknown), 64-byte bursts, rate 1, a full ring blocks, producer share 1. */
void cab_config_default(CabConfig *cfg);

/* NULL if [cfg] is acceptable, else a message naming the field, its value and the rule, e.g.
 * "cab: chunk size 3000 is not a power of two". The message lives in a thread-local buffer
 * until the next failing call on the same thread. Fields left 0 count as their defaults. */
const char *cab_config_check(const CabConfig *cfg);


/* ====================================================================== */
/* Rings and producers                                                     */
/* ====================================================================== */

typedef struct CabRing CabRing; /* private: cab_internal.h */

/* Called around a producer's wait on a full ring (exhaustive mode only), from the producer
 * thread. block_begin: the producer is about to wait indefinitely. block_wait, when set: runs
 * [wait(arg)], the wait itself (polls of the ring, or the producer's own analysis under
 * CAB_FULL_SELF/ADAPTIVE), and returns when it does; the runtime runs it as a blocking region
 * (the producer counts as being at a safepoint, and the collector, knowing the thread is
 * blocked, neither signals it nor scans what [wait] puts on its stack), and takes the thread
 * back at its end (it may stop there for a collection in progress). NULL: the ring calls
 * [wait] directly. block_end: the wait is over. The three run once per long wait, in this
 * order. Any hook may be NULL. The hooks must not push into the ring of the producer that is
 * waiting; [wait] touches only the ring and the analysis state (never the runtime's heap). */
typedef struct CabBlockHooks {
    void (*block_begin)(void *ctx);
    void (*block_end)(void *ctx);
    void *ctx;
    void (*block_wait)(void *ctx, void (*wait)(void *arg), void *arg);
} CabBlockHooks;

/* The producer's cursor, kept by the runtime in thread-local storage (copying it is fine
 * while no push is running). Only [cur] is touched on the fast path.
 *
 * Exhaustive fast path (cab_push). The sequence the JIT emits, with TLS the thread-local
 * block holding the CabProducer, r = a scratch register, and EV the event (register or
 * imm32); it is the paper's Figure 6(a):
 *
 *       mov   r, [TLS + offsetof(CabProducer, cur)]
 *       cmp   qword [r], 0             ; slot CLEAR?
 *       jne   .slow                    ; MAGIC (wrap), full, other transport: out of line
 *       mov   qword [r], EV            ; the event (acquire load/release store are plain movs)
 *       add   r, 8
 *       mov   [TLS + offsetof(CabProducer, cur)], r
 *   .slow (out of line, cold section):
 *       save caller-saved registers; call cab_push_slow(&TLS.producer, EV); restore; jmp back
 *       (cab_push_slow stores the event and advances cur itself)
 *
 * Sampling fast path (cab_push_sampling): the same with `cmp qword [r], -1` (MAGIC) and
 * cab_push_wrap as the out-of-line call: the paper's Figure 6(c).
 *
 * For NWAY/FFWD rings, and after cab_close, [cur] points at a global word holding MAGIC, so
 * both fast paths above fall through to their out-of-line functions, which dispatch on the
 * transport (or abort after close). cab_nway_push/cab_ffwd_push are the baselines' own fast
 * paths for benchmarks. */
typedef struct CabProducer {
    uint64_t *cur;     /* next slot to write (CAB); the redirect word otherwise */
    uint64_t *base;    /* first slot of the ring: where a wrap goes (paper's BUFADDR) */
    CabRing *ring;     /* not owned: the ring outlives the producer's use of it */
    uint64_t laps;     /* CAB: wraps so far, for the produced count (no per-event counter) */
    uint64_t *tcur;    /* NWAY: next slot in the current buffer */
    uintptr_t tmask;   /* NWAY: buffer bytes - 1 (buffers are aligned to their size) */
    uint64_t tcount;   /* NWAY: events in buffers handed over so far */
    uint64_t tidx;     /* FFWD: absolute index of the next event (= produced count) */
    uint64_t fmask;    /* FFWD: slots - 1 */
    uint64_t final;    /* after cab_close: the produced count (the ring may be gone) */
    uint64_t *end;     /* CAB, exhaustive: the MAGIC sentinel after the last slot (cab_reserve);
                          NULL otherwise */
    bool closed;
} CabProducer;

/* Create a ring for [cfg] (NULL: defaults) and its producer cursor [*prod]. [hooks] may be
 * NULL (the producer then just waits). Returns NULL and sets [*err] (if not NULL) to a
 * static message on invalid configuration or out of memory. The ring's memory is outside
 * the GC heap, pointer-free, chunk-aligned and owned by the ring. */
CabRing *cab_ring_new(const CabConfig *cfg, const CabBlockHooks *hooks, CabProducer *prod,
                      const char **err);

/* Free [r] and its memory. Neither side may use it afterwards. */
void cab_ring_free(CabRing *r);

/* The configuration [r] was created with (validated, defaults filled in). */
const CabConfig *cab_ring_config(const CabRing *r);

/* Out of line, cold: wrap at MAGIC, wait on a full ring (through the block hooks), sampling
 * stores reached through cab_push, other transports, push after close (fatal). Stores [ev]
 * and advances the cursor. */
void cab_push_slow(CabProducer *p, uint64_t ev) __attribute__((noinline, cold));

/* Out of line, cold: the sampling path's wrap (slot held MAGIC), other transports. */
void cab_push_wrap(CabProducer *p, uint64_t ev) __attribute__((noinline, cold));

/* Exhaustive push of [ev] (cab_event_valid). Fast path: load the slot, test for CLEAR,
 * store, advance. Acquire load pairs with the consumer's release clear (edge C->P in
 * cab_ring.c); release store pairs with the consumer's acquire of the guard or of the
 * flushed count (edge P->C). Both are plain movs on x86-64.
 * The branch must stay a branch: the call in the not-CLEAR case keeps gcc from making the
 * slot address depend on the loaded value through a cmov (measuring.md); checked with
 * objdump, see cab/README.md "Generated code". */
static inline void cab_push(CabProducer *p, uint64_t ev) {
    uint64_t *slot = p->cur;
    if (__builtin_expect(__atomic_load_n(slot, __ATOMIC_ACQUIRE) != CAB_CLEAR, 0)) {
        cab_push_slow(p, ev);
        return;
    }
    __atomic_store_n(slot, ev, __ATOMIC_RELEASE);
    p->cur = slot + 1;
}

/* Register form of cab_push, for code that keeps the cursor in a register across pushes (a
 * loop that produces many events, JIT-compiled code between two safepoints, benchmarks).
 * [cur] is the caller's copy of p->cur; the result is the new one. The caller loads it
 * (cur = p->cur) before the first push and stores it back (p->cur = cur) before anything
 * else uses [p]: cab_push, cab_flush, cab_close, cab_producer_count. The slow path stores the
 * cursor itself, calls cab_push_slow and hands back the cursor it left.
 * Fast path, 5 instructions (cab/README.md "Generated code"):
 *     mov (cur),tmp; test tmp,tmp; jne .slow; mov ev,(cur); add $8,cur
 * cab_push is this plus the load and store of p->cur, which the compiler cannot keep in a
 * register: the acquire load makes it reload p->cur (another thread may have written it). */
static inline uint64_t *cab_push_r(CabProducer *p, uint64_t *cur, uint64_t ev) {
    if (__builtin_expect(__atomic_load_n(cur, __ATOMIC_ACQUIRE) != CAB_CLEAR, 0)) {
        p->cur = cur;
        cab_push_slow(p, ev);
        return p->cur;
    }
    __atomic_store_n(cur, ev, __ATOMIC_RELEASE);
    return cur + 1;
}

/* Sampling push: never blocks, never looks for CLEAR; only MAGIC (end of ring) leaves the
 * fast path. Relaxed load: the producer learns nothing from the consumer in this mode. */
static inline void cab_push_sampling(CabProducer *p, uint64_t ev) {
    uint64_t *slot = p->cur;
    if (__builtin_expect(__atomic_load_n(slot, __ATOMIC_RELAXED) == CAB_MAGIC, 0)) {
        cab_push_wrap(p, ev);
        return;
    }
    __atomic_store_n(slot, ev, __ATOMIC_RELEASE);
    p->cur = slot + 1;
}

/* N-way buffering's own fast path: plain store into the producer-owned buffer, hand over
 * when the cursor reaches a buffer boundary (power-of-two buffers: a mask and a test). */
void cab_nway_handover(CabProducer *p) __attribute__((noinline, cold));
static inline void cab_nway_push(CabProducer *p, uint64_t ev) {
    uint64_t *c = p->tcur;
    *c++ = ev;
    p->tcur = c;
    if (__builtin_expect(((uintptr_t)c & p->tmask) == 0, 0)) cab_nway_handover(p);
}

/* FastForward's own fast path: test the slot for CLEAR (acquire, pairs with the consumer's
 * release clear), store (release, pairs with the consumer's acquire load of the slot), move
 * the index on modulo the ring. */
void cab_ffwd_push_slow(CabProducer *p, uint64_t ev) __attribute__((noinline, cold));
static inline void cab_ffwd_push(CabProducer *p, uint64_t ev) {
    uint64_t *slot = p->base + (p->tidx & p->fmask);
    if (__builtin_expect(__atomic_load_n(slot, __ATOMIC_ACQUIRE) != CAB_CLEAR, 0)) {
        cab_ffwd_push_slow(p, ev);
        return;
    }
    __atomic_store_n(slot, ev, __ATOMIC_RELEASE);
    p->tidx++;
}

/* Reservation, for instrumentation at points that must never wait (heap loads and stores
 * between two safepoints): called at the safepoint before them, it returns once the next
 * [n] pushes (n is clamped to one chunk) are sure to find their slots CLEAR, waiting here
 * (through the block hooks, like a full ring) if they are not. Sound because the consumer
 * clears chunks in ring order, each from its first slot on, with release stores: if the
 * slot of the n-th push is CLEAR, so is every slot before it (acquire load). The wrap at
 * MAGIC is followed. Exhaustive CAB rings only; a no-op otherwise (sampling never waits;
 * the N-way and FastForward baselines have no such guarantee). */
void cab_reserve_slow(CabProducer *p, size_t n) __attribute__((noinline, cold));
static inline void cab_reserve(CabProducer *p, size_t n) {
    uint64_t *last = p->cur + (n - 1);
    if (__builtin_expect(last < p->end && __atomic_load_n(last, __ATOMIC_ACQUIRE) == CAB_CLEAR, 1)) return;
    cab_reserve_slow(p, n);
}

/* Would the next push wait for room (exhaustive CAB; false otherwise)? For counting pushes
 * that wait where they must not (cold paths only). */
bool cab_push_would_wait(const CabProducer *p);

/* Exhaustive CAB rings: whether the next [n] pushes would find their slots CLEAR, without
 * waiting (cab_reserve's test, the wrap followed; n is clamped to the ring less two chunks,
 * the consumer's distance). Sound for the reason cab_reserve is: the consumer clears in
 * ring order. True for rings of other kinds (they have no such test). Sampled instrumentation's
 * adaptive rate asks it before a window (vm/prof/vm_sample.c). */
bool cab_has_room(const CabProducer *p, size_t n);

/* Events pushed through [p] so far (computed from the cursor; no per-event counter). */
uint64_t cab_producer_count(const CabProducer *p);

/* Make everything pushed so far consumable without waiting for the producer to move a
 * chunk on (cab_ring.c, "Flush"). Cheap (one release store); the producer keeps going. */
void cab_flush(CabProducer *p);

/* Flush, publish the producer's statistics and mark the ring closed: the consumer drains
 * the residue and then reports done. Any push afterwards is fatal ("cab: push after close").
 * The producer must not touch [p]'s ring afterwards. */
void cab_close(CabProducer *p);

/* ====================================================================== */
/* Consumers                                                               */
/* ====================================================================== */

/* Receives [n] >= 1 valid events in order. [events] may point into the ring: valid only
 * during the call. Runs on the consumer thread; must not push into the same ring.
 * Sampling mode: before a burst that does not follow the last one read comes a call with
 * n == 0 (events NULL): the events that follow are not contiguous with those before (state carried from one event to the next,
 * such as "the next call is made from this site", must be dropped). */
typedef void (*CabConsumeFn)(void *ctx, const uint64_t *events, size_t n);

/* Counters, for -Xstats and the benchmarks. Producer-side fields (marked P) are published
 * by cab_close and are 0 before it; consumer-side fields (C) are exact on the consumer
 * thread at any time, and for anyone once the ring is done. Exhaustive mode proves that
 * nothing was lost with produced == consumed; sampling mode with
 * produced == consumed + skipped + lost.
 * Times are CLOCK_MONOTONIC nanoseconds. None of these costs anything on the producer's fast
 * path: the produced count comes from the cursor, the rest is counted on slow paths. */
typedef struct CabStats {
    uint64_t produced; /* P: events pushed */
    uint64_t consumed; /* C: events handed to the consume function */
    uint64_t skipped;  /* C, sampling: events left unread by choice (the bursts not
                          chosen); exhaustive: 0 */
    uint64_t lost;     /* C, sampling: overwritten before being read = produced - consumed -
                          skipped (set once the ring is done); exhaustive: 0 */
    uint64_t dropped;  /* C, sampling: skipped + lost, the events that were not analysed;
                          exhaustive: 0 */
    uint64_t chunks;   /* C: chunks taken by the consumer, partial ones (flush) included;
                          NWAY: buffers; FFWD: cache lines */
    uint64_t blocks;   /* P: times the producer found the ring full and waited (exhaustive
                          only; sampling never waits). Every wait counts, short or long */
    uint64_t hooked_blocks; /* P: the blocks that outlasted the spin: block_begin/block_end
                          were called once around each (<= blocks) */
    uint64_t blocked_ns; /* P: time the producer spent in those waits, spin included,
                          measured around each wait (two clock reads per block) */
    uint64_t idle_ns;  /* C: time the consumer thread spent with nothing to consume. For a
                          ring served by an analyzer thread (cab_analyzer_register): the time
                          that thread spent idle, with nothing ready in any of its rings,
                          while it served this ring. Other consumers report it through
                          cab_ring_add_idle_ns */
    uint64_t idle_sleeps; /* C: the analyzer thread's sleeps while idle (pauses and yields
                          not counted), while it served this ring: how often it woke to
                          find nothing ("Idle sleeps", cab_analyzer.c) */
    uint64_t flushes;  /* P: cab_flush calls, cab_close's included */
    uint64_t self_chunks; /* C: the part of [chunks] the producer analysed itself on a full
                          ring (CAB_FULL_SELF, CAB_FULL_ADAPTIVE) */
    uint64_t self_ns;  /* C: the producer's time analysing them (included in blocked_ns) */
    uint64_t busy_ns;  /* C: time an analyzer thread spent consuming this ring (clock reads
                          around each turn that found something) */
    unsigned nshards;  /* sharded analysis (CabConsumer.nshards): the shards, else 0 */
    uint64_t shard_chunks[CAB_MAX_SHARDS], shard_ns[CAB_MAX_SHARDS]; /* per shard: chunks
                          analysed and the time its analyzer thread spent in consume_shard */
} CabStats;

/* Consume what is ready, at most [max_chunks] chunks (0: no limit), passing events to
 * [fn]. Never waits. Returns the number of slots the consumer moved past (events analysed or
 * skipped); 0 when nothing is ready, or while the producer is analysing its full ring itself
 * (CAB_FULL_SELF/ADAPTIVE: the consumer side is held by one of them at a time). Exhaustive
 * CAB: a chunk is ready when its guard holds an event, or up to the producer's last flush. */
size_t cab_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks);

/* The consume function and context the producer uses when it analyses its own full ring
 * (CAB_FULL_SELF/ADAPTIVE); the same that the consumer passes to cab_consume. Set before the
 * first push, on the producer thread or before the ring reaches it (cab_analyzer_register
 * calls it). Without it a full ring always blocks. */
void cab_ring_set_self(CabRing *r, CabConsumeFn fn, void *ctx);

/* Add [ns] to the ring's busy_ns: time spent in cab_consume (the analyzer threads do it). */
void cab_ring_add_busy_ns(CabRing *r, uint64_t ns);

/* True once the ring is closed and the consumer has passed the last event. */
bool cab_ring_done(CabRing *r);

/* Counters as seen from the consumer thread (or from anyone after both sides are done). */
CabStats cab_ring_stats(const CabRing *r);

/* Add [ns] to the ring's idle_ns: for a consumer loop of one's own (the analyzer threads do
 * it themselves). Consumer thread only. */
void cab_ring_add_idle_ns(CabRing *r, uint64_t ns);

/* Check the ring's invariants from the consumer thread while the producer is stopped (or
 * from a test): every slot outside the unconsumed window is CLEAR, MAGIC sits after the
 * last slot. Returns NULL or a message. Exhaustive CAB only; others return NULL. */
const char *cab_ring_check(const CabRing *r, const CabProducer *p);

/* ====================================================================== */
/* Analyzer threads                                                        */
/* ====================================================================== */

/* A pool of analyzer threads. Each ring registered with it is served by exactly one of them
 * (its single consumer), round-robin with that thread's other rings. The threads are raw
 * pthreads, never registered with the garbage collector: consume functions must not touch
 * the GC heap (events carry integers and ids only, DESIGN.md). */
typedef struct CabAnalyzerPool CabAnalyzerPool;

typedef struct CabConsumer {
    CabConsumeFn consume;                              /* required */
    void (*done)(void *ctx, const CabStats *stats);    /* after the last event; may be NULL */
    void *ctx;
    /* Sharded analysis (nshards >= 2; cab_analyzer.c, "Shards"): every event goes to
     * [nshards] shards, each an analysis state of its own that handles its share of the
     * items (a cache simulation's sets, a count's functions), run on nshards different
     * analyzer threads at once. consume_shard(ctx, shard, events, n): the events of the
     * stream in order, for shard [shard] (0 .. nshards-1); [consume] is then unused.
     * Needs at least nshards analyzer threads; a sharded ring's producer never analyses it
     * itself (CabConfig.full acts as block). */
    void (*consume_shard)(void *ctx, unsigned shard, const uint64_t *events, size_t n);
    unsigned nshards;                                  /* 0 or 1: not sharded */
} CabConsumer;

/* Start [nthreads] >= 1 analyzer threads. [cpus]: if not NULL, analyzer i is bound to OS CPU
 * cpus[i] (through hwloc; a failed bind is reported on stderr and ignored). Returns NULL and
 * sets [*err] on failure. */
CabAnalyzerPool *cab_analyzer_start(int nthreads, const int *cpus, const char **err);

/* Hand [r] to analyzer [which] (-1: the one with the fewest rings). From now on only that
 * thread consumes [r]; after cab_close on the producer side it drains the residue, calls
 * c->done with the final counters and frees the ring. Returns the analyzer's index, or -1 if
 * c->nshards is above CAB_MAX_SHARDS or the pool's threads. Sharded: shard 0 runs on that
 * analyzer, shard j on the j-th next one. */
int cab_analyzer_register(CabAnalyzerPool *pool, CabRing *r, const CabConsumer *c, int which);

/* Testing (-Xtest.analyzer_stall, -Xtest.analyzer_die): faults of analyzer 0, which then
 * takes one chunk at a time. Set before the first ring is registered. */
typedef struct CabAnalyzerFaults {
    unsigned stall_ms;  /* sleep this long once, after the first chunk taken */
    uint64_t die_after; /* after this many chunks (0: never) the thread ends; its rings move
                           to the live analyzer with the fewest rings, or to a spare thread
                           started for them if it was the last: nothing lost or read twice */
} CabAnalyzerFaults;
void cab_analyzer_set_faults(CabAnalyzerPool *pool, const CabAnalyzerFaults *f);

/* An observer of the analyzer threads (-Xtrace), called on the analyzer thread: once when it
 * starts ([busy] -1, times 0), then each time it turns from busy to idle or back, with the
 * phase that ended: [busy] 1 (rounds that analysed something: [chunks] chunks) or 0 (rounds
 * that found nothing), from [t0] to [t1] (CLOCK_MONOTONIC nanoseconds); and at its end, the
 * phase it was in. [analyzer]: the thread's index in its pool. Set before
 * cab_analyzer_start; NULL (the default): none, and the analyzers read no clock for it. */
typedef void (*CabPhaseFn)(int analyzer, int busy, uint64_t t0, uint64_t t1, uint64_t chunks);
void cab_analyzer_set_phase_observer(CabPhaseFn fn);

/* Wait until every registered ring has been closed (by its producer) and drained, stop the
 * threads and free the pool. Producers must close their rings, or this waits forever. */
void cab_analyzer_shutdown(CabAnalyzerPool *pool);

/* ====================================================================== */
/* Topology (hwloc, loaded once)                                           */
/* ====================================================================== */

/* L1 data cache size in bytes of the first core, 0 if hwloc does not know. */
size_t cab_topology_l1d_bytes(void);

/* 4 x L1d rounded down to a power of two, at least CAB_MIN_CHUNK_BYTES;
 * CAB_FALLBACK_CHUNK_BYTES if the L1d size is unknown (paper section 3.1.3). */
size_t cab_topology_default_chunk(void);

/* An OS CPU index other than [cpu] that shares the smallest cache with it (L2, else L3,
 * else any other CPU); -1 if there is none. */
int cab_topology_pick_partner(int cpu);

/* Bind the calling thread to OS CPU [cpu]. Returns 0 or an errno value. */
int cab_topology_bind_self(int cpu);

/* The OS CPU the calling thread last ran on, -1 if unknown. */
int cab_topology_current_cpu(void);

/* Placement (-Xaffinity=auto): which CPUs the application threads (native language threads
 * or carriers) may run on, and one CPU per analyzer thread. One PU per core is used; the
 * analyzers take the last cores in hwloc's order (cores that are neighbours in that order
 * share the most cache, so the analyzers sit under the same L2/L3 as the application cores
 * next to them), the application the rest. With fewer than two cores, or no analyzers,
 * nothing is reserved. */
#define CAB_MAX_PLACED 256
typedef struct CabPlacement {
    int napp;                          /* CPUs for application threads (0: unrestricted) */
    int app_cpus[CAB_MAX_PLACED];
    int nanalyzers;                    /* analyzers with a CPU of their own */
    int analyzer_cpus[CAB_MAX_PLACED];
    int ncores;                        /* cores in the machine (0: topology unknown) */
} CabPlacement;
void cab_topology_plan(int nanalyzers, CabPlacement *p);

/* Read the topology now, without hwloc's plugins (PCI, OpenCL, GL, the libxml2 XML reader:
 * what they find is never read here, and loading them maps libxml2, libicu, libX11 and
 * more). The caller must be the process's only thread: it sets hwloc's
 * HWLOC_PLUGINS_BLACKLIST around the load (unless the environment has one) and takes it
 * out again, so the program and its children see the environment they were given. Later
 * calls of any cab_topology function use the topology read here. */
void cab_topology_load_core(void);

/* Bind the calling thread to the set of OS CPUs [cpus][0..n). Returns 0 or an errno value. */
int cab_topology_bind_self_set(const int *cpus, int n);

/* Human-readable summary of the topology (packages, cores, PUs, caches and which cores
 * share them) into [buf]; returns the length it needed. */
size_t cab_topology_describe(char *buf, size_t n);

/* Name of the smallest cache shared by OS CPUs [a] and [b] ("L2", "L3", ...), or "no cache". */
const char *cab_topology_shared_cache(int a, int b);

#endif
