/* cab_ffwd.c: FastForward (Giacomoni, Moseley, Vachharajani, PPoPP 2008), the second
 * comparison transport of the CAB paper's section 6.1: a slot-by-slot lock-free queue with
 * no shared indices (like CAB, an empty slot is the handshake) but no chunks: the consumer
 * dequeues and clears one event at a time.
 *
 *   producer (cab_ffwd_push, cab_api.h)          consumer (below)
 *   (D) acquire-load slot[h] == CLEAR  <------   (C) release-store slot[t] = CLEAR
 *   (A) release-store slot[h] = ev     ------>   (B) acquire-load slot[t] != CLEAR
 *
 * Temporal slipping: to keep the two sides off each other's cache lines, the consumer stops
 * when it comes within the dangerous distance of the producer (2 cache lines: the slot 16
 * ahead of it is CLEAR) and starts again only at the safe distance (6 lines: the slot 48
 * ahead holds an event) - the parameters the CAB paper used. Both probes are acquire loads
 * paired with the producer's A. Events covered by a flush (or close) are taken regardless of
 * the distance, so the residue is never stuck. */
#include "cab_internal.h"

#define FFWD_DANGER (2 * CAB_LINE_SLOTS)
#define FFWD_SAFE (6 * CAB_LINE_SLOTS)

void cab_ffwd_init(CabRing *r, CabProducer *p) {
    p->cur = &cab_redirect_word; /* cab_push/cab_push_sampling go out of line to us */
    p->tidx = 0;
    p->fmask = r->nslots - 1;
}

void cab_ffwd_push_slow(CabProducer *p, uint64_t ev) {
    CabRing *r = p->ring;
    uint64_t *slot = p->base + (p->tidx & p->fmask);
    cab_wait_zero(r, slot);  /* D: pairs with the consumer's C */
    store_rel(slot, ev);     /* A */
    p->tidx++;
}

size_t cab_ffwd_consume(CabRing *r, CabConsumeFn fn, void *ctx, size_t max) {
    const size_t mask = r->nslots - 1;
    const size_t limit = max ? max * r->chunk_slots : SIZE_MAX;
    size_t total = 0;
    while (total < limit) {
        if (load_acq(&r->flushed) <= r->cabs) { /* nothing flushed pending: slip rule */
            if (r->ffwd_need_safe) {
                if (load_acq(&r->slots[(r->cabs + FFWD_SAFE) & mask]) == CAB_CLEAR) break;
                r->ffwd_need_safe = false;
            } else if (load_acq(&r->slots[(r->cabs + FFWD_DANGER) & mask]) == CAB_CLEAR) {
                r->ffwd_need_safe = true;
                break;
            }
        }
        /* Dequeue one line's worth, slot by slot. */
        uint64_t buf[CAB_LINE_SLOTS];
        size_t m = 0;
        while (m < CAB_LINE_SLOTS) {
            uint64_t *slot = &r->slots[r->cabs & mask];
            uint64_t v = load_acq(slot); /* B: pairs with A */
            if (v == CAB_CLEAR) break;
            buf[m++] = v;
            store_rel(slot, CAB_CLEAR); /* C: pairs with D */
            r->cabs++;
        }
        if (m == 0) break;
        fn(ctx, buf, m);
        r->consumed += m;
        r->chunks++; /* FFWD: counts lines */
        total += m;
        if (m < CAB_LINE_SLOTS) break;
    }
    return total;
}
