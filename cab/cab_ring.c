/* cab_ring.c: the CAB ring (exhaustive and sampling modes): creation and sizes, the
 * producer's out-of-line paths (wrap, full ring, flush, close), the chunked consumer, and
 * the dispatch to the comparison transports.
 *
 * ---- Layout ----
 *
 *   slots:  [ chunk 0 | chunk 1 | ... | chunk C-1 ][MAGIC]
 *            ^ chunk-aligned, C = ring/chunk >= 3   ^ slot nslots: end-of-ring sentinel
 *   Chunks are powers of two (slot -> chunk is a shift); the ring is any multiple of the
 *   chunk, since nothing on the producer's side depends on the ring size.
 *
 * Every slot holds CLEAR (free) or an event. The producer's fast path tests its slot for
 * CLEAR and finds the end of the ring by the MAGIC after the last slot: no bounds check, no
 * shared index. Memory comes from mmap (zero pages: CLEAR), outside the GC heap, pointer-free.
 *
 * ---- Why no shared indices ----
 *
 * Index-based queues (Lamport, SPSCQueue) keep a head and a tail that each side must read:
 * the producer reads the consumer's index to find room, so the index's cache line bounces
 * between the cores on every refresh. Here the slot itself is the handshake: the producer
 * reads the slot it is about to write anyway (same line, already on its way into its cache),
 * and the consumer reads only the slots of its own chunk plus one guard slot a chunk ahead.
 * The consumer stays at least one whole chunk behind, so the two never touch the same line
 * in the steady state (paper 3.1.2-3.1.3). The only producer-written words outside the slots
 * are [flushed] and [closed], touched by cab_flush/cab_close (rare).
 *
 * ---- Protocol and memory ordering (each atomic below names its edge) ----
 *
 *   producer                                     consumer
 *   --------                                     --------
 *   (D) acquire-load slot == CLEAR  <------.     (B) acquire-load guard (first slot of
 *   (A) release-store slot = ev     ---.    \        chunk n+2) != CLEAR, or
 *       cur++                           \    \   (G) acquire-load flushed > position
 *   (F) release-store flushed = count ---+--->   read chunk n (plain loads, in the
 *   (E) release-store closed = 1  -------+--->     consume function)
 *                                         \  `-- (C) release-store slot = CLEAR, batch by
 *                                          \         batch right after reading
 *                                           `->  (H) acquire-load closed
 *
 *   A pairs with B: the guard's store is released after every store of chunks n and n+1 in
 *     the producer's program order, so the consumer's acquire of the guard makes the whole
 *     of chunk n visible to plain reads.
 *   F pairs with G: a flush releases the count after the slots it covers.
 *   C pairs with D: the consumer's (plain) reads of a slot happen before the producer
 *     overwrites it. D is also the acquire of the poll slot while the producer is blocked.
 *   E pairs with H: the producer's statistics (plain stores) are visible after closed.
 *   On x86-64 all of these are plain movs; the orders only restrain the compiler.
 *
 * ---- Window invariant (exhaustive) ----
 *
 *   With p = producer's absolute position and c = consumer's, the non-CLEAR slots are
 *   exactly those with absolute positions in [c, p), p - c <= nslots. cab_ring_check checks
 *   it. Consequently a guard that holds an event was written in the current lap, and a
 *   producer that finds its slot non-CLEAR has p - c == nslots (full) with the consumer
 *   exactly on that slot.
 *
 * ---- Resume distance ----
 *
 *   A producer blocked at slot s of chunk k polls the first slot of chunk k+R and resumes
 *   when it is CLEAR: then chunks k .. k+R-1 are free (paper: R = 2, "wait until two chunks
 *   are free", which backs the producer off so the consumer works at a distance).
 *   When the ring is full the consumer sits on s. It can take chunk j only while the guard
 *   j+2 holds an event; the producer stopped at chunk k's first slot (worst case), so the
 *   consumer frees chunks k, k+1, ..., k+C-3 and then waits for the guard at chunk k.
 *   The poll slot must lie in a chunk the consumer can reach: R <= C-3. Hence
 *       R = min(2, C - 3)      (C = 3: R = 0, poll s itself; C = 4: R = 1)
 *   which is safe for every accepted size (C >= 3). The paper's R = 2 deadlocks with C <= 4
 *   (tests/unit/cab: test_cab_push_smallest_rings). R = 0 polls s itself rather than chunk
 *   k's first slot, which the producer may already have rewritten when s is mid-chunk.
 *
 * ---- Flush ----
 *
 *   The consumer never reads the chunk the producer is writing, so the residue (events after
 *   the last complete chunk) would wait for more events. cab_flush publishes the producer's
 *   absolute count in [flushed] (F); a consumer whose guard is CLEAR reads [flushed] (G) and
 *   consumes up to it, possibly stopping mid-chunk and sharing that chunk with the producer
 *   for a while (correct: every slot is handed over individually; only cache-friendliness
 *   suffers, and flushes are rare). Nothing is padded or skipped, so absolute positions stay
 *   equal to event counts and the stats can prove that nothing was lost.
 *   Rejected: (1) a flush marker event and a jump to the next chunk: wastes up to a chunk per
 *   flush and still needs the consumer to be told, since its guard is two chunks ahead;
 *   (2) handing the partial chunk over by copying it: a copy on the producer thread.
 *
 * ---- Blocking (cab_wait_zero, shared by the three transports) ----
 *
 *   A producer that finds its slot (NWAY: its next buffer's state word) not CLEAR:
 *     1. spins: CAB_SPIN polls of the resume slot with a pause between (~35 us on the
 *        project's Zen 4: 1024 x ~33 ns), about the time a consumer needs to free two
 *        128 KiB chunks. Most waits end here on two dedicated cores. No hook is called.
 *     2. calls hooks.block_begin(ctx) once, on the producer thread: from here on the VM
 *        counts the thread as being at a safepoint;
 *     3. polls the same slot until CLEAR: CAB_YIELDS sched_yields, then nanosleeps from 1 us
 *        doubling up to CAB_SLEEP_MAX_NS (long_wait; through hooks.block_wait when set, which
 *        the VM runs as a blocking region);
 *     4. calls hooks.block_end(ctx) once, on the producer thread, before it stores.
 *   Counted (CabStats): every wait in [blocks], those that reached step 2 in
 *   [hooked_blocks], and the time of steps 1-4 in [blocked_ns] (one clock read at the start
 *   and one at the end of the wait; nothing on the fast path).
 *
 * ---- Full ring: block, self, adaptive (CabConfig.full) ----
 *
 *   The consumer side of a ring (the position, the counters, and the analysis state behind
 *   the consume function) has one owner at a time, [owner]: the consumer takes it in
 *   cab_consume with a CAS NONE -> CONSUMER (acquire) and gives it back with a release store
 *   of NONE; a producer on a full ring may take it the same way (NONE -> PRODUCER) and run
 *   the consume function on its own thread (the deferred-methods paper's synchronous
 *   processing). The release of one holder pairs with the acquire of the next, so the next
 *   one sees every position, counter and analysis-state store of the last: no event is
 *   analysed twice or skipped, and events are analysed in ring order, whoever analyses
 *   them (order-sensitive analyses need nothing more). A CAS that fails means the other
 *   side holds it: the consumer skips the ring for this round (cab_consume returns 0), the
 *   producer waits as in block mode and tries again.
 *     block:    wait (below).
 *     self:     take the consumer side at once and analyse chunk by chunk until the poll
 *               slot is CLEAR. While the consumer holds it, raise [self_wanted] and wait:
 *               the consumer gives the ring up at its next chunk boundary and skips it
 *               until the producer's wait is over, so the producer's own CPU does the
 *               work, as the policy says, instead of racing the consumer for the short
 *               gap between two of its chunks.
 *     adaptive: spin as block does; then, at every poll of the wait, analyse itself only if
 *               the consumer is not at this ring and no core is idle (cab_idle_core: the
 *               runnable threads, the producer included, fill every online CPU). A consumer
 *               that has not freed room within the spin although it could run is busy
 *               elsewhere or waiting for a CPU; waiting for it then costs more than the
 *               analysis, and the producer's CPU is the one free to do it. With an idle
 *               core the consumer will run: wait.
 *   The producer analyses between the block hooks, so it counts as stopped for the runtime
 *   meanwhile (consume functions never touch the runtime's heap); its time is in
 *   blocked_ns and, separately, self_ns; its chunks in self_chunks.
 *
 * ---- Sampling ----
 *
 *   The producer only looks for MAGIC (cab_push_sampling) and overwrites freely. The
 *   consumer waits for the guard like in exhaustive mode, then analyses a random fraction
 *   (sample_rate) of the chunk's bursts (sample_chunk), reading with relaxed loads into a
 *   local buffer (the producer may be overwriting the chunk), and clears only the chunk's
 *   first slot so that it can tell when the chunk has been refilled (paper Figure 5).
 */
#include "cab_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* Polls before the block hooks, a pause between two: ~35 us on Zen 4, where a pause takes
 * ~33 ns (measured; Intel cores before Skylake take ~10 cycles, so ~3 us there). About the
 * time a consumer at 2 G events/s needs to free two 128 KiB chunks; a wait longer than that
 * is long enough to tell the runtime (paper Figure 3(b): spin_wait, then cooperate). */
#define CAB_SPIN 1024
/* Yields before sleeping, then sleeps doubling from 1 us up to CAB_SLEEP_MAX_NS. */
#define CAB_YIELDS 16
#define CAB_SLEEP_MAX_NS 100000

uint64_t cab_redirect_word = CAB_MAGIC;

/* ====================================================================== */
/* Messages                                                                */
/* ====================================================================== */

static _Thread_local char msgbuf[200];

static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(msgbuf, sizeof msgbuf, f, ap);
    va_end(ap);
    return msgbuf;
}

static void fatal(const char *msg) __attribute__((noreturn, cold));
static void fatal(const char *msg) {
    fprintf(stderr, "cab: %s\n", msg);
    abort();
}

/* ====================================================================== */
/* Configuration and sizes                                                 */
/* ====================================================================== */

static bool is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static unsigned log2_of(size_t x) {
    unsigned n = 0;
    while ((size_t)1 << n < x) n++;
    return n;
}

void cab_config_default(CabConfig *cfg) {
    cfg->transport = CAB_TRANSPORT_CAB;
    cfg->mode = CAB_MODE_EXHAUSTIVE;
    cfg->ring_bytes = CAB_DEFAULT_RING_BYTES;
    cfg->chunk_bytes = cab_topology_default_chunk();
    cfg->burst_bytes = CAB_DEFAULT_BURST_BYTES;
    cfg->sample_rate = 1.0;
    cfg->full = CAB_FULL_BLOCK;
    cfg->producer_share = 1.0;
}

/* Zero fields take their defaults; a defaulted chunk shrinks to fit CAB_MIN_CHUNKS chunks
 * into an explicitly small ring. */
static CabConfig fill_defaults(const CabConfig *in) {
    CabConfig c = *in;
    if (c.ring_bytes == 0) c.ring_bytes = CAB_DEFAULT_RING_BYTES;
    if (c.chunk_bytes == 0) {
        c.chunk_bytes = cab_topology_default_chunk();
        while (c.chunk_bytes > CAB_MIN_CHUNK_BYTES &&
               c.ring_bytes / c.chunk_bytes < CAB_MIN_CHUNKS)
            c.chunk_bytes /= 2;
    }
    if (c.burst_bytes == 0) c.burst_bytes = CAB_DEFAULT_BURST_BYTES;
    if (c.sample_rate == 0) c.sample_rate = 1.0;
    if (c.producer_share == 0) c.producer_share = 1.0;
    return c;
}

static const char *check_filled(const CabConfig *c) {
    if ((unsigned)c->transport > CAB_TRANSPORT_FFWD)
        return fmt("cab: unknown transport %d", (int)c->transport);
    if ((unsigned)c->mode > CAB_MODE_SAMPLING) return fmt("cab: unknown mode %d", (int)c->mode);
    if ((unsigned)c->full > CAB_FULL_ADAPTIVE) return fmt("cab: unknown full-ring policy %d", (int)c->full);
    if (c->mode == CAB_MODE_SAMPLING && c->transport != CAB_TRANSPORT_CAB)
        return "cab: sampling mode needs the cab transport";
    if (c->ring_bytes > CAB_MAX_RING_BYTES)
        return fmt("cab: ring size %zu is above the maximum %zu", c->ring_bytes,
                   CAB_MAX_RING_BYTES);
    if (!is_pow2(c->chunk_bytes))
        return fmt("cab: chunk size %zu is not a power of two", c->chunk_bytes);
    if (c->chunk_bytes < CAB_MIN_CHUNK_BYTES)
        return fmt("cab: chunk size %zu is below the minimum %zu", c->chunk_bytes,
                   CAB_MIN_CHUNK_BYTES);
    if (c->ring_bytes % c->chunk_bytes != 0)
        return fmt("cab: chunk size %zu does not divide ring size %zu", c->chunk_bytes,
                   c->ring_bytes);
    if (c->ring_bytes / c->chunk_bytes < CAB_MIN_CHUNKS)
        return fmt("cab: ring size %zu holds %zu chunks of %zu bytes; at least %d are needed "
                   "(the consumer's guard is chunk n+2)",
                   c->ring_bytes, c->ring_bytes / c->chunk_bytes, c->chunk_bytes,
                   CAB_MIN_CHUNKS);
    /* FastForward moves its index on with a mask (its paper's modulo); CAB finds the end by
     * MAGIC and N-way buffering by the buffer's alignment, so any multiple of the chunk
     * does for them (3 chunks included). */
    if (c->transport == CAB_TRANSPORT_FFWD && !is_pow2(c->ring_bytes))
        return fmt("cab: ring size %zu is not a power of two (needed by ffwd)", c->ring_bytes);
    if (c->burst_bytes % 8 != 0 || c->burst_bytes > c->chunk_bytes)
        return fmt("cab: burst size %zu is not a multiple of 8 within the chunk size %zu",
                   c->burst_bytes, c->chunk_bytes);
    if (!(c->sample_rate > 0 && c->sample_rate <= 1))
        return fmt("cab: sampling rate %g is not in (0, 1]", c->sample_rate);
    if (!(c->producer_share > 0 && c->producer_share <= 1))
        return fmt("cab: producer share %g is not in (0, 1]", c->producer_share);
    return NULL;
}

const char *cab_config_check(const CabConfig *cfg) {
    CabConfig c = fill_defaults(cfg);
    return check_filled(&c);
}

/* ====================================================================== */
/* Creation                                                                */
/* ====================================================================== */

CabRing *cab_ring_new(const CabConfig *cfg, const CabBlockHooks *hooks, CabProducer *prod,
                      const char **err) {
    const char *dummy;
    if (err == NULL) err = &dummy;
    CabConfig c;
    if (cfg == NULL) cab_config_default(&c);
    else c = fill_defaults(cfg);
    if ((*err = check_filled(&c)) != NULL) return NULL;

    CabRing *r;
    if (posix_memalign((void **)&r, CAB_LINE, sizeof *r) != 0) goto oom;
    memset(r, 0, sizeof *r);
    r->cfg = c;
    if (hooks) r->hooks = *hooks;
    r->nslots = c.ring_bytes / 8;
    r->chunk_slots = c.chunk_bytes / 8;
    r->chunk_shift = log2_of(r->chunk_slots);
    r->nchunks = c.ring_bytes / c.chunk_bytes;
    r->burst_slots = c.burst_bytes / 8;
    r->rate_q32 = (uint64_t)(c.sample_rate * 4294967296.0);
    if (r->rate_q32 == 0) r->rate_q32 = 1;
    r->sample_rng = UINT64_C(0x9e3779b97f4a7c15); /* fixed: a run's choice can be repeated */
    r->resume = r->nchunks - 3 < 2 ? (unsigned)(r->nchunks - 3) : 2;
    r->ncpus = c.full == CAB_FULL_ADAPTIVE ? cab_online_cpus() : 0;
    r->idle_sleep_ns = cab_idle_sleep_ns(r->nslots, c.producer_share);

    /* The ring plus one line: the MAGIC sentinel, alone on its line so that the producer's
     * read of it never shares a line with anything the consumer writes. Anonymous pages
     * are zero, CLEAR everywhere, and cost nothing until touched: clearing 2 MiB here
     * was 2.3 M instructions and 512 page faults at every thread's start, and a ring of a
     * sampled producer (-Xprofile.always) touches only the pages its windows fill. The
     * mapping is cut to a chunk-aligned start. */
    size_t len = c.ring_bytes + CAB_LINE + c.chunk_bytes; /* room for the alignment */
    char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        free(r);
        goto oom;
    }
    char *start = (char *)(((uintptr_t)map + c.chunk_bytes - 1) & ~(uintptr_t)(c.chunk_bytes - 1));
    r->map = map;
    r->map_bytes = len;
    r->slots = (uint64_t *)start;
    r->slots[r->nslots] = CAB_MAGIC;

    memset(prod, 0, sizeof *prod);
    prod->ring = r;
    prod->base = r->slots;
    prod->cur = r->slots;
    if (c.transport == CAB_TRANSPORT_CAB && c.mode == CAB_MODE_EXHAUSTIVE) prod->end = r->slots + r->nslots;
    if (c.transport == CAB_TRANSPORT_NWAY) {
        if (posix_memalign((void **)&r->nway_state, CAB_LINE, r->nchunks * CAB_LINE) != 0) {
            munmap(r->map, r->map_bytes);
            free(r);
            goto oom;
        }
        memset(r->nway_state, 0, r->nchunks * CAB_LINE);
        cab_nway_init(r, prod);
    } else if (c.transport == CAB_TRANSPORT_FFWD) {
        cab_ffwd_init(r, prod);
    }
    /* The ring reaches the consumer thread through whatever hands it over (a mutex in
     * cab_analyzer_register, pthread_create in tests): that orders these plain stores. */
    return r;
oom:
    *err = "cab: out of memory for the ring";
    return NULL;
}

void cab_ring_free(CabRing *r) {
    if (r == NULL) return;
    munmap(r->map, r->map_bytes);
    free(r->nway_state);
    free(r);
}

const CabConfig *cab_ring_config(const CabRing *r) { return &r->cfg; }

uint64_t cab_idle_sleep_ns(size_t nslots, double share) {
    if (share >= 1) return CAB_ANALYZER_SLEEP_NS;
    double ns = (double)nslots / 4 / (share * CAB_PEAK_EVENTS_PER_US) * 1000;
    return ns < CAB_ANALYZER_SLEEP_NS ? CAB_ANALYZER_SLEEP_NS : ns > CAB_IDLE_SLEEP_MAX_NS ? CAB_IDLE_SLEEP_MAX_NS : (uint64_t)ns;
}

/* ====================================================================== */
/* Producer: waiting, wrap, full ring                                      */
/* ====================================================================== */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t consume_any(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks);

/* Producer on a full ring (file header, "Full ring"): take the consumer side if nobody
 * holds it and analyse chunk by chunk until *[w] is 0. False if the consumer holds it or
 * nothing could be taken; the caller waits and may try again. */
static bool self_consume(CabRing *r, const uint64_t *w) {
    while (load_acq(w) != 0) { /* D: pairs with the clear (C), ours or the consumer's */
        uint32_t none = CAB_OWNER_NONE;
        if (!__atomic_compare_exchange_n(&r->owner, &none, CAB_OWNER_PRODUCER, false, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            return false;
        uint64_t t0 = now_ns(), before = r->chunks;
        size_t n = consume_any(r, r->self_fn, r->self_ctx, 1);
        r->self_chunks += r->chunks - before;
        r->self_ns += now_ns() - t0;
        __atomic_store_n(&r->owner, CAB_OWNER_NONE, __ATOMIC_RELEASE); /* pairs with the next CAS */
        if (n == 0) return false;
    }
    return true;
}

/* Adaptive: analyse now? Only if the consumer is not at this ring (relaxed: a hint, the CAS
 * decides) and no core is idle. */
static bool adaptive_self(const CabRing *r) {
    return __atomic_load_n(&r->owner, __ATOMIC_RELAXED) == CAB_OWNER_NONE && !cab_idle_core(r->ncpus);
}

/* Step 3 of "Blocking" (top of the file): poll [w] until CLEAR, analysing the producer's own
 * chunks meanwhile when the policy says so. Run by hooks.block_wait when the runtime has one
 * (a blocking region: the collector neither stops nor scans this thread meanwhile). */
typedef struct LongWait {
    CabRing *r;
    const uint64_t *w;
    CabFull full;
} LongWait;

static void long_wait(void *arg) {
    LongWait *lw = arg;
    CabRing *r = lw->r;
    long ns = 1000;
    if (lw->full == CAB_FULL_SELF) __atomic_store_n(&r->self_wanted, 1, __ATOMIC_RELAXED);
    for (int k = 0; load_acq(lw->w) != 0; k++) { /* D: pairs with the consumer's release clear (C) */
        if (lw->full == CAB_FULL_SELF || (lw->full == CAB_FULL_ADAPTIVE && adaptive_self(r)))
            if (self_consume(r, lw->w)) break;
        if (k < CAB_YIELDS) {
            sched_yield();
        } else {
            struct timespec ts = {0, ns};
            nanosleep(&ts, NULL);
            if (ns < CAB_SLEEP_MAX_NS) ns *= 2;
        }
    }
    if (lw->full == CAB_FULL_SELF) __atomic_store_n(&r->self_wanted, 0, __ATOMIC_RELAXED);
}

void cab_wait_zero(CabRing *r, const uint64_t *w) {
    r->blocks_live++;
    uint64_t t0 = now_ns();
    CabFull full = r->self_fn != NULL ? r->cfg.full : CAB_FULL_BLOCK;
    if (full != CAB_FULL_SELF) {
        for (int i = 0; i < CAB_SPIN; i++) {
            if (load_acq(w) == 0) { /* D: pairs with the consumer's release clear (C) */
                r->blocked_ns_live += now_ns() - t0;
                return;
            }
            cpu_relax();
        }
    }
    /* A long wait, or the producer's own analysis: tell the runtime (the producer now counts
     * as being at a safepoint). The hooks are called here only, never during the spin above,
     * and always together. */
    r->hooked_live++;
    if (r->hooks.block_begin) r->hooks.block_begin(r->hooks.ctx);
    LongWait lw = {r, w, full};
    if (r->hooks.block_wait)
        r->hooks.block_wait(r->hooks.ctx, long_wait, &lw);
    else
        long_wait(&lw);
    if (r->hooks.block_end) r->hooks.block_end(r->hooks.ctx);
    r->blocked_ns_live += now_ns() - t0; /* the hooks' own time included: the producer was
                                            held up by the full ring all along */
}

/* The slot a producer blocked at [slot] polls: R chunks ahead (file header, "Resume
 * distance"); [slot] itself when R = 0. */
static uint64_t *poll_slot(const CabRing *r, uint64_t *slot) {
    if (r->resume == 0) return slot;
    size_t chunk = (size_t)(slot - r->slots) >> r->chunk_shift;
    size_t target = (chunk + r->resume) % r->nchunks;
    return r->slots + (target << r->chunk_shift);
}

static void push_other(CabProducer *p, uint64_t ev) {
    if (p->closed) fatal("push after close");
    if (!cab_event_valid(ev)) fatal("push of a reserved word (CLEAR or MAGIC)");
    switch (p->ring->cfg.transport) {
    case CAB_TRANSPORT_NWAY: cab_nway_push(p, ev); return;
    case CAB_TRANSPORT_FFWD: cab_ffwd_push(p, ev); return;
    case CAB_TRANSPORT_CAB: break;
    }
    fatal("bad transport");
}

static void push_slow(CabProducer *p, uint64_t ev) {
    if (p->cur == &cab_redirect_word) {
        push_other(p, ev);
        return;
    }
    CabRing *r = p->ring;
    uint64_t *slot = p->cur;
    uint64_t v = load_acq(slot); /* D: pairs with the consumer's release clear (C) */
    if (v == CAB_MAGIC) {        /* the sentinel after the last slot: wrap */
        slot = p->base;
        p->laps++;
        v = load_acq(slot);      /* D */
    }
    if (v != CAB_CLEAR && r->cfg.mode == CAB_MODE_EXHAUSTIVE) {
        /* Full: the consumer sits exactly on [slot] (window invariant). Wait for the
         * resume distance, after which [slot] itself is CLEAR: the consumer cleared it
         * before the poll slot, in program order, with release stores we acquired. */
        cab_wait_zero(r, poll_slot(r, slot));
    }
    store_rel(slot, ev); /* A: pairs with the consumer's acquire of guard/flushed (B/G) */
    p->cur = slot + 1;
}

void cab_push_slow(CabProducer *p, uint64_t ev) { push_slow(p, ev); }

void cab_reserve_slow(CabProducer *p, size_t n) {
    if (p->end == NULL || p->cur == &cab_redirect_word || n == 0) return; /* no guarantee to give */
    CabRing *r = p->ring;
    if (n > r->chunk_slots) n = r->chunk_slots;
    uint64_t *last = p->cur + (n - 1);
    if (last >= p->end) last = p->base + (last - p->end); /* past MAGIC: the pushes wrap */
    if (load_acq(last) != CAB_CLEAR) cab_wait_zero(r, last); /* D: pairs with the clear (C) */
}

bool cab_push_would_wait(const CabProducer *p) {
    if (p->end == NULL || p->cur == &cab_redirect_word) return false;
    const uint64_t *slot = p->cur;
    uint64_t v = load_acq(slot);
    if (v == CAB_MAGIC) v = load_acq(p->base);
    return v != CAB_CLEAR;
}
void cab_push_wrap(CabProducer *p, uint64_t ev) { push_slow(p, ev); }

bool cab_has_room(const CabProducer *p, size_t n) {
    if (p->end == NULL || p->cur == &cab_redirect_word || n == 0) return true;
    const CabRing *r = p->ring;
    size_t most = r->nslots > 2 * r->chunk_slots ? r->nslots - 2 * r->chunk_slots : 1;
    if (n > most) n = most;
    size_t ahead = (size_t)(p->end - p->cur); /* slots before the wrap */
    const uint64_t *last = n <= ahead ? p->cur + (n - 1) : p->base + (n - 1 - ahead);
    return load_acq(last) == CAB_CLEAR; /* acquire: pairs with the consumer's clearing stores */
}

uint64_t cab_producer_count(const CabProducer *p) {
    if (p->closed) return p->final;
    switch (p->ring->cfg.transport) {
    case CAB_TRANSPORT_CAB: return p->laps * p->ring->nslots + (uint64_t)(p->cur - p->base);
    case CAB_TRANSPORT_NWAY: return p->tcount + (((uintptr_t)p->tcur & p->tmask) / 8);
    case CAB_TRANSPORT_FFWD: return p->tidx;
    }
    return 0;
}

void cab_flush(CabProducer *p) {
    if (p->closed) fatal("flush after close");
    CabRing *r = p->ring;
    if (r->cfg.transport == CAB_TRANSPORT_NWAY) cab_nway_flush(p);
    r->flushes_live++;
    store_rel(&r->flushed, cab_producer_count(p)); /* F: pairs with the consumer's G */
}

void cab_close(CabProducer *p) {
    cab_flush(p);
    CabRing *r = p->ring;
    uint64_t n = cab_producer_count(p);
    r->p_produced = n;
    r->p_blocks = r->blocks_live;
    r->p_hooked = r->hooked_live;
    r->p_blocked_ns = r->blocked_ns_live;
    r->p_flushes = r->flushes_live;
    /* Read before [closed]: from then on the analyzer may free the ring. */
    uint32_t *w = __atomic_load_n(&r->wake, __ATOMIC_RELAXED);
    __atomic_store_n(&r->closed, 1, __ATOMIC_RELEASE); /* E: pairs with H */
    /* An analyzer in a long idle sleep drains the residue now, not at the sleep's end (the
     * program's exit waits for it). After [closed]: see cab_analyzer.c, "Idle sleeps". The
     * word is the pool's, which outlives its rings. */
    if (w != NULL) cab_wake_word(w);
    p->final = n;
    p->closed = true;
    p->cur = &cab_redirect_word;
    p->end = NULL; /* cab_reserve: nothing to guarantee any more */
    p->ring = NULL;
}

/* ====================================================================== */
/* Consumer: exhaustive                                                    */
/* ====================================================================== */

static bool is_closed(const CabRing *r) {
    return __atomic_load_n(&r->closed, __ATOMIC_ACQUIRE) != 0; /* H: pairs with E */
}

/* Hand slots [idx, idx+n) (no wrap inside) to [fn] batch by batch, clearing each batch
 * right after the call. The clearing loop is unrolled by a cache line: gcc neither unrolls
 * it nor merges the atomic stores by itself, and the loop's own add/cmp/jne per slot made the
 * two-core CAB about 1.5-2x slower (bench/cab, consumer-bound). Prefetching the next lines
 * for writing (prefetchw) was tried as well and was slower. */
static void take_span(CabRing *r, size_t idx, size_t n, CabConsumeFn fn, void *ctx) {
    uint64_t *s = r->slots + idx;
    while (n > 0) {
        size_t k = n < CAB_BATCH_SLOTS ? n : CAB_BATCH_SLOTS;
        fn(ctx, s, k);
#pragma GCC unroll 8
        for (size_t i = 0; i < k; i++) store_rel(&s[i], CAB_CLEAR); /* C: pairs with D */
        s += k;
        n -= k;
    }
}

static size_t consume_exhaustive(CabRing *r, CabConsumeFn fn, void *ctx, size_t max) {
    const size_t cs = r->chunk_slots, n_all = r->nslots;
    size_t total = 0;
    for (size_t taken = 0; max == 0 || taken < max; taken++) {
        size_t idx = (size_t)(r->cabs % n_all); /* a division per chunk: off the hot path */
        size_t cstart = idx & ~(cs - 1);
        size_t guard = (cstart + 2 * cs) % n_all;
        size_t n;
        if (load_acq(&r->slots[guard]) != CAB_CLEAR) { /* B: pairs with A */
            n = cstart + cs - idx;
        } else {
            uint64_t f = load_acq(&r->flushed); /* G: pairs with F */
            if (f <= r->cabs) break;
            n = cstart + cs - idx;
            if (f - r->cabs < n) n = (size_t)(f - r->cabs);
        }
        take_span(r, idx, n, fn, ctx);
        r->cabs += n;
        r->consumed += n;
        r->chunks++;
        total += n;
    }
    return total;
}

/* ====================================================================== */
/* Consumer: sampling                                                      */
/* ====================================================================== */

/* Sample the chunk at [idx] holding [n] events: it is cut into bursts of burst_slots, and
 * each burst is analysed with probability sample_rate, chosen at random (xorshift64*) and
 * independently of the others. So the fraction of events analysed is the rate (all of them
 * at rate 1: with a consumer that keeps up, the same events as in exhaustive mode), every
 * event has the same chance, and a program whose events repeat with some period cannot
 * line up with the choice (an evenly spaced choice, every k-th burst, would see the same
 * phase of a loop every time). A burst is read with relaxed loads (the producer may be
 * overwriting it) into a local buffer, and its valid words are passed on. */
static inline bool sample_next(CabRing *r) {
    uint64_t x = r->sample_rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->sample_rng = x;
    return ((x * UINT64_C(0x2545f4914f6cdd1d)) >> 32) < r->rate_q32;
}

static void sample_chunk(CabRing *r, size_t idx, size_t n, CabConsumeFn fn, void *ctx) {
    r->chunks++;
    const size_t w = r->burst_slots;
    uint64_t buf[CAB_BATCH_SLOTS];
    /* The bursts' boundaries move by a random phase in every chunk (the first burst is the
     * shorter [0, phase)): with fixed boundaries, events that always sit at the same place
     * in a burst (the second of a pair cut off from the first: every 4th call when sites
     * and calls alternate) would be the same ones program-wide, and a program whose calls
     * repeat with a period would have some of its edges always cut. */
    size_t phase = w > 1 ? (size_t)(r->sample_rng % w) : 0;
    for (size_t at = 0, len; at < n; at += len) {
        len = at == 0 && phase ? phase : w;
        if (len > n - at) len = n - at;
        if (!sample_next(r)) {
            r->skipped += len;
            r->sample_contig = false;
            continue;
        }
        if (!r->sample_contig) fn(ctx, NULL, 0); /* a gap (cab_api.h) */
        r->sample_contig = true;
        for (size_t done = 0; done < len;) {
            size_t k = len - done < CAB_BATCH_SLOTS ? len - done : CAB_BATCH_SLOTS, m = 0;
            for (size_t i = 0; i < k; i++) {
                uint64_t v = load_rlx(&r->slots[idx + at + done + i]); /* racy by design */
                if (cab_event_valid(v)) buf[m++] = v;
            }
            if (m) fn(ctx, buf, m);
            r->consumed += m;
            done += k;
        }
    }
}

static size_t consume_sampling(CabRing *r, CabConsumeFn fn, void *ctx, size_t max) {
    const size_t cs = r->chunk_slots, n_all = r->nslots;
    size_t total = 0;
    for (size_t taken = 0; max == 0 || taken < max; taken++) {
        size_t idx = (size_t)(r->cabs % n_all);
        size_t guard = (idx + 2 * cs) % n_all;
        bool closed = is_closed(r); /* H: before the guard, so that a closed ring is read by
                                       positions only, not by stale guards of older laps */
        if (!closed && load_acq(&r->slots[guard]) != CAB_CLEAR) { /* B: pairs with A */
            sample_chunk(r, idx, cs, fn, ctx);
            /* Only the first slot (paper Fig. 5(b) line 10): it is how this consumer sees
             * that the chunk was refilled one lap later. Relaxed: the producer never reads
             * CLEAR in sampling mode, nothing is published by it. */
            store_rlx(&r->slots[idx], CAB_CLEAR);
            r->cabs += cs;
            total += cs;
            continue;
        }
        if (!closed) break;
        /* Closed: the producer is gone and [flushed] is final. Only the last nslots events
         * can still be in the ring; start at the first whole chunk of them (what lies
         * before is lost and counted so at the end). */
        uint64_t p = load_acq(&r->flushed); /* G */
        if (p <= r->cabs) break;
        if (p - r->cabs > r->nslots) {
            uint64_t lo = p - r->nslots;
            r->cabs = (lo + cs - 1) & ~(uint64_t)(cs - 1);
            r->sample_contig = false; /* what lay before was lost */
            if (r->cabs >= p) break;
            idx = (size_t)(r->cabs % n_all);
        }
        size_t n = p - r->cabs < cs ? (size_t)(p - r->cabs) : cs;
        sample_chunk(r, idx, n, fn, ctx);
        r->cabs += n;
        total += n;
    }
    return total;
}

/* ====================================================================== */
/* Consumer: dispatch, done, stats, check                                  */
/* ====================================================================== */

/* The consumer side is taken for one chunk at a time (file header, "Full ring"): a consumer
 * preempted in the middle of a long turn would otherwise keep a producer that could analyse
 * its full ring itself waiting for that consumer's CPU. One CAS and one store per chunk. */
size_t cab_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks) {
    size_t total = 0;
    for (size_t taken = 0; max_chunks == 0 || taken < max_chunks; taken++) {
        if (__atomic_load_n(&r->self_wanted, __ATOMIC_RELAXED))
            break; /* the producer of a full ring (self) analyses it: leave it the ring */
        uint32_t none = CAB_OWNER_NONE;
        if (!__atomic_compare_exchange_n(&r->owner, &none, CAB_OWNER_CONSUMER, false, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            break; /* the producer is analysing its full ring: its chunks, not ours */
        size_t n = consume_any(r, fn, ctx, 1);
        __atomic_store_n(&r->owner, CAB_OWNER_NONE, __ATOMIC_RELEASE); /* pairs with the next CAS */
        if (n == 0) break;
        total += n;
    }
    return total;
}

void cab_ring_set_self(CabRing *r, CabConsumeFn fn, void *ctx) {
    r->self_fn = fn;
    r->self_ctx = ctx;
}

static size_t consume_any(CabRing *r, CabConsumeFn fn, void *ctx, size_t max_chunks) {
    switch (r->cfg.transport) {
    case CAB_TRANSPORT_NWAY: return cab_nway_consume(r, fn, ctx, max_chunks);
    case CAB_TRANSPORT_FFWD: return cab_ffwd_consume(r, fn, ctx, max_chunks);
    case CAB_TRANSPORT_CAB: break;
    }
    if (r->cfg.mode == CAB_MODE_SAMPLING) return consume_sampling(r, fn, ctx, max_chunks);
    return consume_exhaustive(r, fn, ctx, max_chunks);
}

bool cab_ring_done(CabRing *r) {
    if (r->finished) return true;
    if (!is_closed(r)) return false;
    bool done;
    if (r->cfg.transport == CAB_TRANSPORT_NWAY) done = cab_nway_done(r);
    else done = r->cabs >= load_acq(&r->flushed); /* G */
    if (!done) return false;
    uint64_t seen = r->consumed + r->skipped;
    r->lost = r->p_produced > seen ? r->p_produced - seen : 0;
    r->finished = true;
    return true;
}

CabStats cab_ring_stats(const CabRing *r) {
    CabStats s = {0};
    s.consumed = r->consumed;
    s.skipped = r->skipped;
    s.lost = r->lost;
    s.dropped = r->skipped + r->lost;
    s.chunks = r->chunks;
    s.idle_ns = r->idle_ns;
    s.idle_sleeps = r->idle_sleeps;
    s.self_chunks = r->self_chunks;
    s.self_ns = r->self_ns;
    s.busy_ns = r->busy_ns;
    if (is_closed(r)) { /* H: the producer's plain stores below are visible */
        s.produced = r->p_produced;
        s.blocks = r->p_blocks;
        s.hooked_blocks = r->p_hooked;
        s.blocked_ns = r->p_blocked_ns;
        s.flushes = r->p_flushes;
    }
    return s;
}

void cab_ring_add_idle_ns(CabRing *r, uint64_t ns) { r->idle_ns += ns; }

void cab_ring_add_busy_ns(CabRing *r, uint64_t ns) { r->busy_ns += ns; }

const char *cab_ring_check(const CabRing *r, const CabProducer *p) {
    if (r->cfg.transport != CAB_TRANSPORT_CAB || r->cfg.mode != CAB_MODE_EXHAUSTIVE) return NULL;
    if (r->slots[r->nslots] != CAB_MAGIC) return "cab: end-of-ring sentinel overwritten";
    uint64_t prod = p->closed ? p->final : cab_producer_count(p);
    if (prod < r->cabs || prod - r->cabs > r->nslots)
        return fmt("cab: positions out of order: producer %llu, consumer %llu",
                   (unsigned long long)prod, (unsigned long long)r->cabs);
    uint64_t fill = prod - r->cabs;
    for (size_t i = 0; i < r->nslots; i++) {
        uint64_t d = ((uint64_t)i + r->nslots - r->cabs % r->nslots) % r->nslots;
        bool in_window = d < fill;
        uint64_t v = load_rlx(&r->slots[i]);
        if (in_window && !cab_event_valid(v))
            return fmt("cab: slot %zu inside the window holds %#llx", i, (unsigned long long)v);
        if (!in_window && v != CAB_CLEAR)
            return fmt("cab: slot %zu outside the window is not CLEAR", i);
    }
    return NULL;
}
