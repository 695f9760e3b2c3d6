/* cab_nway.c: N-way buffering, the first comparison transport of the CAB paper's section
 * 6.1: the ring is cut into N power-of-two buffers (N = ring/chunk) that change hands whole.
 *
 * Each buffer has a state word on its own cache line: 0 = EMPTY (the producer's), n > 0 =
 * FULL with n events (the consumer's). Lock-free hand-over, as in the paper's improvement
 * over PiPA (no semaphores):
 *
 *   producer                                   consumer
 *   (A) release-store state[b] = n   -------->  (B) acquire-load state[b] != 0
 *       (plain stores into buffer b before)         read buffer b with plain loads
 *   (D) acquire-load state[b'] == 0  <--------  (C) release-store state[b] = 0
 *       then plain stores into b'
 *
 *   A pairs with B (the events are visible), C pairs with D (the consumer's reads happen
 *   before the producer refills the buffer). Unlike CAB, the data words are plain: the
 *   buffer belongs to one side at a time.
 *
 * The producer's fast path (cab_nway_push in cab_api.h) stores and then tests the cursor's
 * low bits for a buffer boundary, which the alignment of the buffers to their size makes a
 * mask and a test (paper 6.1: "the end of each buffer is evaluated by a modulo operation
 * and test instruction"). A flush hands over the partial buffer and moves to the next one:
 * the rest of the buffer is wasted, which is fine for a baseline. */
#include "cab_internal.h"

static uint64_t *state_of(CabRing *r, size_t b) { return &r->nway_state[b * CAB_LINE_SLOTS]; }

void cab_nway_init(CabRing *r, CabProducer *p) {
    p->cur = &cab_redirect_word; /* cab_push/cab_push_sampling go out of line to us */
    p->tcur = r->slots;
    p->tmask = r->cfg.chunk_bytes - 1;
    p->tcount = 0;
}

/* Hand buffer [b] over with [n] events and move to the next one, waiting until it is
 * EMPTY. */
static void hand_over(CabProducer *p, size_t b, uint64_t n) {
    CabRing *r = p->ring;
    store_rel(state_of(r, b), n); /* A: pairs with the consumer's B */
    p->tcount += n;
    size_t next = (b + 1) % r->nchunks;
    p->tcur = r->slots + next * r->chunk_slots;
    if (load_acq(state_of(r, next)) != 0) /* D: pairs with the consumer's C */
        cab_wait_zero(r, state_of(r, next));
}

void cab_nway_handover(CabProducer *p) {
    /* The cursor just crossed the end of buffer b: it points at the start of b+1 (or one past
     * the ring for the last buffer). */
    CabRing *r = p->ring;
    size_t b = ((size_t)(p->tcur - r->slots) >> r->chunk_shift) - 1;
    hand_over(p, b, r->chunk_slots);
}

void cab_nway_flush(CabProducer *p) {
    size_t n = ((uintptr_t)p->tcur & p->tmask) / 8;
    if (n == 0) return;
    CabRing *r = p->ring;
    hand_over(p, (size_t)(p->tcur - r->slots) >> r->chunk_shift, n);
}

size_t cab_nway_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max) {
    size_t total = 0;
    for (size_t taken = 0; max == 0 || taken < max; taken++) {
        size_t b = (size_t)(r->cabs % r->nchunks);
        uint64_t n = load_acq(state_of(r, b)); /* B: pairs with A */
        if (n == 0) break;
        const uint64_t *s = r->slots + b * r->chunk_slots;
        for (uint64_t i = 0; i < n; i += CAB_BATCH_SLOTS)
            fn(ctx, s + i, n - i < CAB_BATCH_SLOTS ? (size_t)(n - i) : CAB_BATCH_SLOTS);
        store_rel(state_of(r, b), 0); /* C: pairs with D */
        r->cabs++; /* NWAY: counts buffers, not events */
        r->consumed += n;
        r->chunks++;
        total += n;
    }
    return total;
}

/* After close (acquired by the caller): the producer handed over its last buffer before
 * [closed], so an EMPTY buffer at the consumer's position means there is nothing left. */
bool cab_nway_done(CabRing *r) {
    return load_acq(state_of(r, (size_t)(r->cabs % r->nchunks))) == 0; /* B */
}
