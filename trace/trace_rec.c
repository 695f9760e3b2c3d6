/* trace_rec.c: the timeline recorder (trace_api.h): a ring of spans per native thread, and
 * the writer of Chrome's trace-event JSON.
 *
 * Tracks. A thread's first record (or name) allocates its Track and pushes it on a global
 * list with a compare-and-swap (the list only grows; the writer walks it after every
 * recorder has stopped). Nothing else is shared: a track's ring and head are written by its
 * thread alone.
 *
 * Ring. Record i lives in chunk (i / TRACE_CHUNK_RECORDS) % TRACE_RING_CHUNKS at
 * i % TRACE_CHUNK_RECORDS; a chunk is allocated when first reached, so the ring is as large
 * as the thread needed, up to TRACE_RING_RECORDS, and then wraps over its oldest records.
 * head counts the records ever written: the ring holds [max(0, head - RING), head).
 *
 * Output: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}, one "X"
 * (complete) event per span, with "ts" and "dur" in microseconds (three decimals: the
 * nanoseconds), times from trace_start; "M" events name the process and each track
 * ("thread_name"), in the order tracks were made ("thread_sort_index"). Complete events, not
 * "B"/"E" pairs: a span is recorded whole when it ends, so a wrapped ring can never leave
 * half a pair. Rejected: writing the file as records come (a file write on the recording
 * paths, and unbounded); one global ring (every recording thread would contend on it). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_api.h"

#define NAME_BYTES 48

typedef struct TraceRec {
    uint64_t t0, t1;
    uint64_t a;
    uint32_t b;
    uint32_t kind;
} TraceRec;

typedef struct Track {
    struct Track *next;  /* the global list; set before the track is published */
    uint32_t tid;        /* 1, 2, ...: the order tracks were made */
    char name[NAME_BYTES];
    uint64_t head;       /* records ever written (only this track's thread writes it) */
    uint64_t lost;       /* records dropped because a chunk could not be allocated */
    TraceRec *chunk[TRACE_RING_CHUNKS]; /* owned (malloc'd), NULL until reached */
} Track;

bool trace_flag;

static char *trace_path;      /* owned; NULL when not tracing */
static uint64_t trace_t0;     /* trace_start's time: ts 0 in the file */
static Track *tracks;         /* the global list, newest first (CAS push) */
static uint32_t next_tid;
static _Thread_local Track *tl_track;
static int write_rc = 1;      /* 1: not written yet; under write_lock */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

/* Names and categories of the kinds (TRACE_KIND order). */
static const char *const kind_name[TRACE_KIND_COUNT] = {
    [TRACE_RUN] = "run", [TRACE_CARRIER_IDLE] = "idle", [TRACE_SAFEPOINT] = "safepoint",
    [TRACE_STOPPED] = "stopped", [TRACE_GC] = "collection", [TRACE_RING_FULL] = "ring full",
    [TRACE_ANALYZER_BUSY] = "analyzing", [TRACE_ANALYZER_IDLE] = "idle",
};
static const char *const kind_cat[TRACE_KIND_COUNT] = {
    [TRACE_RUN] = "thread", [TRACE_CARRIER_IDLE] = "thread", [TRACE_SAFEPOINT] = "safepoint",
    [TRACE_STOPPED] = "safepoint", [TRACE_GC] = "gc", [TRACE_RING_FULL] = "cab",
    [TRACE_ANALYZER_BUSY] = "analyzer", [TRACE_ANALYZER_IDLE] = "analyzer",
};

uint64_t trace_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int trace_start(const char *path, const char **err) {
    /* Fail now, not at the end of a long run, if the file cannot be made (a new file made
     * to find out is removed again: the trace appears whole or not at all). */
    bool existed = access(path, F_OK) == 0;
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        *err = strerror(errno);
        return -1;
    }
    fclose(f);
    if (!existed) unlink(path);
    trace_path = strdup(path);
    if (trace_path == NULL) {
        *err = strerror(ENOMEM);
        return -1;
    }
    trace_t0 = trace_now();
    __atomic_store_n(&trace_flag, true, __ATOMIC_RELAXED);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Recording                                                              */
/* ---------------------------------------------------------------------- */

static __attribute__((noinline)) Track *track_new(void) {
    Track *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->tid = __atomic_add_fetch(&next_tid, 1, __ATOMIC_RELAXED);
    snprintf(t->name, sizeof t->name, "native thread %u", t->tid);
    t->next = __atomic_load_n(&tracks, __ATOMIC_RELAXED);
    /* Release: the writer that finds the track (acquire in trace_write) sees it whole. */
    while (!__atomic_compare_exchange_n(&tracks, &t->next, t, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    tl_track = t;
    return t;
}

static inline Track *track(void) { return tl_track != NULL ? tl_track : track_new(); }

void trace_span(TraceKind kind, uint64_t t0, uint64_t a, uint64_t b) { trace_span_at(kind, t0, trace_now(), a, b); }

void trace_span_at(TraceKind kind, uint64_t t0, uint64_t t1, uint64_t a, uint64_t b) {
    Track *t = track();
    if (t == NULL) return; /* no memory for a track: nothing to count it in either */
    uint64_t h = t->head;
    size_t c = (size_t)(h / TRACE_CHUNK_RECORDS) % TRACE_RING_CHUNKS;
    if (t->chunk[c] == NULL && (t->chunk[c] = malloc(TRACE_CHUNK_RECORDS * sizeof(TraceRec))) == NULL) {
        t->lost++;
        return;
    }
    t->chunk[c][h % TRACE_CHUNK_RECORDS] = (TraceRec){t0 < t1 ? t0 : t1, t1, a, (uint32_t)b, (uint32_t)kind};
    /* Release: pairs with trace_write's acquire of head (the writer runs after the
     * recorders have stopped; the order still documents which records are whole). */
    __atomic_store_n(&t->head, h + 1, __ATOMIC_RELEASE);
}

void trace_thread_name(const char *fmt, ...) {
    Track *t = track();
    if (t == NULL) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                */
/* ---------------------------------------------------------------------- */

/* [s] as a JSON string (track names are ours: printable ASCII, but quote what needs it). */
static void json_str(FILE *f, const char *s) {
    putc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f) fprintf(f, "\\u%04x", ch);
        else putc(ch, f);
    }
    putc('"', f);
}

/* Nanoseconds since trace_start as microseconds with three decimals. */
static void json_us(FILE *f, uint64_t ns) { fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000)); }

static void write_args(FILE *f, const TraceRec *r) {
    switch (r->kind) {
    case TRACE_RUN: fprintf(f, "{\"thread\":%llu}", (unsigned long long)r->a); break;
    case TRACE_SAFEPOINT:
        fputs("{\"time_to_stop_us\":", f);
        json_us(f, r->a);
        putc('}', f);
        break;
    case TRACE_GC: fprintf(f, "{\"heap_used_bytes\":%llu}", (unsigned long long)r->a); break;
    case TRACE_RING_FULL: fprintf(f, "{\"stream_thread\":%llu}", (unsigned long long)r->a); break;
    case TRACE_ANALYZER_BUSY: fprintf(f, "{\"chunks\":%llu}", (unsigned long long)r->a); break;
    default: fputs("{}", f); break;
    }
}

/* The display name of a span: a language thread's run is named by the thread, so a
 * carrier's track reads as the sequence of threads it ran. */
static void write_name(FILE *f, const TraceRec *r) {
    if (r->kind == TRACE_RUN) fprintf(f, "\"thread %llu\"", (unsigned long long)r->a);
    else json_str(f, kind_name[r->kind]);
}

static uint64_t write_track(FILE *f, const Track *t, int *first) {
    uint64_t h = __atomic_load_n(&t->head, __ATOMIC_ACQUIRE);
    uint64_t lo = h > TRACE_RING_RECORDS ? h - TRACE_RING_RECORDS : 0;
    fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":", *first ? "" : ",",
            t->tid);
    json_str(f, t->name);
    fprintf(f, "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
            t->tid, t->tid);
    *first = 0;
    for (uint64_t i = lo; i < h; i++) {
        const TraceRec *r = &t->chunk[(i / TRACE_CHUNK_RECORDS) % TRACE_RING_CHUNKS][i % TRACE_CHUNK_RECORDS];
        if (r->kind == 0 || r->kind >= TRACE_KIND_COUNT) continue; /* never written: cannot happen */
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"cat\":\"%s\",\"name\":", t->tid, kind_cat[r->kind]);
        write_name(f, r);
        fputs(",\"ts\":", f);
        json_us(f, r->t0 > trace_t0 ? r->t0 - trace_t0 : 0);
        fputs(",\"dur\":", f);
        json_us(f, r->t1 - r->t0);
        fputs(",\"args\":", f);
        write_args(f, r);
        putc('}', f);
    }
    return lo;
}

static int write_file(FILE *f) {
    Track *all = __atomic_load_n(&tracks, __ATOMIC_ACQUIRE);
    /* Oldest track first (the list is newest first): reverse into an array. */
    size_t n = 0;
    for (Track *t = all; t; t = t->next) n++;
    Track **v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL) return -1;
    size_t i = n;
    for (Track *t = all; t; t = t->next) v[--i] = t;
    fputs("{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"tandem\"}}", f);
    int first = 0;
    uint64_t overwritten = 0, lost = 0;
    for (i = 0; i < n; i++) {
        overwritten += write_track(f, v[i], &first);
        lost += v[i]->lost;
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"records_per_thread\":%u,"
               "\"overwritten_records\":%llu,\"lost_records\":%llu}}\n",
            (unsigned)TRACE_RING_RECORDS, (unsigned long long)overwritten, (unsigned long long)lost);
    free(v);
    return 0;
}

static int write_locked(void);

/* The main thread's end and the signal thread may both get here: the first writes, the
 * other waits for it and returns its result. */
int trace_write(void) {
    if (trace_path == NULL) return 0;
    pthread_mutex_lock(&write_lock);
    if (write_rc == 1) write_rc = write_locked();
    int rc = write_rc;
    pthread_mutex_unlock(&write_lock);
    return rc;
}

static int write_locked(void) {
    __atomic_store_n(&trace_flag, false, __ATOMIC_RELAXED);
    size_t len = strlen(trace_path) + 32;
    char *tmp = malloc(len);
    int err = 0;
    if (tmp == NULL) {
        err = ENOMEM;
    } else {
        snprintf(tmp, len, "%s.tmp%ld", trace_path, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (f == NULL) {
            err = errno;
        } else {
            errno = 0;
            int rc = write_file(f);
            if (fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
            else if (rc != 0) err = ENOMEM;
            if (fclose(f) != 0 && err == 0) err = errno;
            if (err == 0 && rename(tmp, trace_path) != 0) err = errno;
            if (err != 0) unlink(tmp);
        }
    }
    if (err != 0) fprintf(stderr, "tandem: cannot write the trace to %s: %s\n", trace_path, strerror(err));
    free(tmp);
    return err ? -1 : 0;
}
