/* cab_internal.h: the ring structure shared by cab_ring.c, cab_nway.c and cab_ffwd.c.
 * Private to cab/ (tests may include it, STYLE.md section 6). */
#ifndef CAB_INTERNAL_H
#define CAB_INTERNAL_H

#include <stdalign.h>

#include "cab_api.h"

#define CAB_LINE 64 /* cache line bytes (x86-64, ARMv8 commonly) */
#define CAB_LINE_SLOTS (CAB_LINE / 8)

/* Fields are grouped by writer, each group on its own cache line so that the producer's
 * stores never invalidate the consumer's line and the other way round. */
struct CabRing {
    /* ---- read-only after cab_ring_new (both sides) ---- */
    CabConfig cfg;
    CabBlockHooks hooks;
    uint64_t *slots;      /* nslots + 1 words (MAGIC after the last, CAB); owned, outside GC */
    size_t nslots;        /* ring_bytes / 8 */
    size_t chunk_slots;   /* chunk_bytes / 8 */
    unsigned chunk_shift; /* log2(chunk_slots) */
    size_t nchunks;
    size_t burst_slots;
    uint64_t rate_q32;    /* sample_rate in 32.32 fixed point */
    unsigned resume;      /* CAB resume distance in chunks: min(2, nchunks - 3) */
    uint64_t *nway_state; /* NWAY: nchunks words, one per cache line (stride CAB_LINE_SLOTS);
                             0 = EMPTY (producer may fill), n > 0 = FULL with n events */
    CabConsumeFn self_fn; /* cab_ring_set_self: what the producer analyses its full ring with */
    void *self_ctx;
    int ncpus;            /* CAB_FULL_ADAPTIVE: online CPUs, read once */
    void *map;            /* the mapping [slots] lies in (mmap: zero pages, faulted in as
                             the producer first writes them), and its length */
    size_t map_bytes;

    /* ---- the analyzers' pace (cab_analyzer.c) ---- */
    uint64_t idle_sleep_ns;   /* longest sleep of an idle analyzer serving this ring, from
                                 the producer's share (cab_idle_sleep_ns); set at creation */
    uint32_t *wake;           /* the pool's wake word (set at registration), NULL before:
                                 cab_close wakes the pool through it */

    /* ---- the consumer side's owner (cab_ring.c, "Full ring") ---- */
    alignas(CAB_LINE) uint32_t owner; /* CAB_OWNER_*: CAS NONE -> X with acquire takes the
                                         consumer side, a release store of NONE gives it
                                         back; everything below in "consumer-private" is
                                         touched only by the holder */
    uint32_t self_wanted;             /* CAB_FULL_SELF: set by a producer waiting on its full
                                         ring, cleared when its wait ends; the consumer
                                         leaves the ring at its next chunk boundary while
                                         set (a hint, relaxed: [owner] decides) */

    /* ---- written by the producer, read by the consumer ---- */
    alignas(CAB_LINE) uint64_t flushed; /* absolute count of events made consumable by the
                                           last flush: release store / acquire load */
    uint32_t closed;                    /* 1 after cab_close: release store / acquire load,
                                           stored after flushed and the producer stats */
    uint64_t p_produced, p_blocks, p_hooked, p_blocked_ns, p_flushes; /* producer's counters:
                                           plain, written before the release of [closed],
                                           read after its acquire */
    uint64_t blocks_live;               /* producer-private running counts */
    uint64_t hooked_live, blocked_ns_live;
    uint64_t flushes_live;

    /* ---- consumer-private (the owner's: the analyzer's, or the producer's on a full ring) ---- */
    alignas(CAB_LINE) uint64_t cabs; /* absolute position of the consumer */
    uint64_t consumed, skipped, lost, chunks;
    uint64_t self_chunks, self_ns;   /* CabStats: analysed by the producer, and its time */
    uint64_t busy_ns;                /* cab_ring_add_busy_ns */
    uint64_t idle_ns;                /* cab_ring_add_idle_ns */
    uint64_t idle_sleeps;            /* the analyzer's (cab_analyzer.c) */
    uint64_t sample_rng;             /* sampling: xorshift64* state choosing the bursts */
    bool sample_contig;              /* sampling: the last burst was read and the next
                                        follows it in the stream (no gap to announce) */
    bool ffwd_need_safe;             /* FFWD: stopped at the dangerous distance */
    bool finished;                   /* closed and drained; stats final */
};

/* The global word (holding MAGIC) that CabProducer.cur points at for NWAY/FFWD and after
 * close, so that both inline fast paths fall into their out-of-line functions. Never
 * written. */
extern uint64_t cab_redirect_word;

/* Wait until *[w] is 0 (CLEAR / EMPTY), acquire: spin briefly (CAB_SPIN polls), then call
 * the block hooks around a yield/sleep loop that polls the same word. Counts one block, its
 * time and, past the spin, one hooked block. Producer thread only. */
void cab_wait_zero(CabRing *r, const uint64_t *w);

enum { CAB_OWNER_NONE, CAB_OWNER_CONSUMER, CAB_OWNER_PRODUCER };

/* Idle analyzers (cab_analyzer.c): their sleeps grow up to CAB_ANALYZER_SLEEP_NS while any ring
 * they serve has a producer share of 1 (the time a producer at ~1 G events/s needs to fill a
 * fifth of a 2 MiB ring, so a sleeping analyzer wakes long before the producer has to block);
 * with lower shares, up to the time such a producer needs to fill a quarter of the ring at
 * its share (CAB_PEAK_EVENTS_PER_US), at most CAB_IDLE_SLEEP_MAX_NS. */
#define CAB_ANALYZER_SLEEP_NS 50000
#define CAB_IDLE_SLEEP_MAX_NS 4000000
#define CAB_PEAK_EVENTS_PER_US 1000
uint64_t cab_idle_sleep_ns(size_t nslots, double share);
/* Wake the sleepers of the pool whose wake word is [w] (cab_analyzer.c). */
void cab_wake_word(uint32_t *w);

/* Relaxed/acquire/release helpers, so each use site names its order. */
static inline uint64_t load_acq(const uint64_t *w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }
static inline uint64_t load_rlx(const uint64_t *w) { return __atomic_load_n(w, __ATOMIC_RELAXED); }
static inline void store_rel(uint64_t *w, uint64_t v) { __atomic_store_n(w, v, __ATOMIC_RELEASE); }
static inline void store_rlx(uint64_t *w, uint64_t v) { __atomic_store_n(w, v, __ATOMIC_RELAXED); }

/* CAB_FULL_ADAPTIVE (cab_topology.c): the online CPUs, and whether one of them is idle now
 * (the runnable threads of the whole system, the caller included, fewer than [ncpus]). */
int cab_online_cpus(void);
bool cab_idle_core(int ncpus);

/* Transport parts, called by cab_ring.c's dispatch. */
void cab_nway_init(CabRing *r, CabProducer *p);
void cab_nway_flush(CabProducer *p);
size_t cab_nway_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks);
bool cab_nway_done(CabRing *r);
void cab_ffwd_init(CabRing *r, CabProducer *p);
size_t cab_ffwd_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks);

/* Consume function batch: events handed per call and cleared right after, 8 cache lines:
 * small enough to stay in L1 between reading and clearing ("clear immediately after
 * processing each event maximizes temporal locality", paper 3.1.2), big enough that the
 * call costs nothing per event. */
#define CAB_BATCH_SLOTS 64

#endif
