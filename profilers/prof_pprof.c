/* prof_pprof.c: the pprof profile format (-Xprofile.format=pprof): a builder the analyses add
 * samples to (prof_pprof.h), encoded as a perftools.profiles.Profile message by protobuf-c
 * from prof_profile.proto and gzip-compressed by zlib, as pprof, Pyroscope and the other
 * readers expect.
 *
 * Tables: strings interned (string_table[0] is "", as the format requires), functions by
 * name string, locations by (function, line); ids are index + 1 (0 means none). Samples are
 * kept sparse, (type, value) each, and get their full value vector at write time, when the
 * number of types is known. Rejected: encoding the varints by hand (the wire format is
 * simple, but a library keeps it right, and the issue asks for one). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "prof_out.h"
#include "prof_pprof.h"
#include "prof_profile.pb-c.h"

#define WHO "pprof"
#define GZIP_WINDOW (15 + 16) /* deflate's largest window, +16: a gzip header and trailer */
#define OUT_CHUNK 65536       /* compressed bytes written to the FILE at a time */

typedef struct Fn {
    uint32_t name;  /* string index of the display name */
    uint32_t file;  /* string index, 0 if unknown */
    uint32_t line;  /* first line, 0 if unknown */
} Fn;

typedef struct Loc {
    uint32_t fn;    /* index in fns */
    uint32_t line;
} Loc;

typedef struct Sample {
    size_t off;     /* first location id in the pool */
    uint32_t n;
    uint32_t type;
    uint64_t value;
    uint64_t thread; /* PROF_PPROF_NO_THREAD: none */
} Sample;

struct ProfPprof {
    char **strs;      /* owned, each malloc'd */
    size_t nstrs, strs_cap;
    ProfMap str_map;  /* string hash (+ k after k collisions) -> index */
    Fn *fns;          /* owned */
    size_t nfns, fns_cap;
    ProfMap fn_map;   /* name string index -> index in fns */
    Loc *locs;        /* owned */
    size_t nlocs, locs_cap;
    ProfMap loc_map;  /* fn << 32 | line -> index in locs */
    uint32_t *types;  /* owned; per sample type: type string index, unit string index */
    size_t ntypes, types_cap; /* ntypes counts pairs; types_cap counts uint32s */
    Sample *samples;  /* owned */
    size_t nsamples, samples_cap;
    uint64_t *pool;   /* owned; the samples' stacks */
    size_t pool_len, pool_cap;
};

/* ---------------------------------------------------------------------- */
/* Tables                                                                 */
/* ---------------------------------------------------------------------- */

/* FNV-1a, finished by prof_hash64 so that short names spread over the map. */
static uint64_t str_hash(const char *s) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return prof_hash64(h);
}

/* The string index of [s] ([len] bytes), added if new. */
static uint32_t intern_n(ProfPprof *b, const char *s, size_t len) {
    char *copy = malloc(len + 1);
    if (copy == NULL) prof_oom(WHO);
    memcpy(copy, s, len);
    copy[len] = '\0';
    uint64_t key = str_hash(copy);
    for (;; key++) { /* a colliding hash probes the next key */
        uint32_t i = prof_map_get(&b->str_map, key);
        if (i == PROF_MAP_NONE) break;
        if (strcmp(b->strs[i], copy) == 0) {
            free(copy);
            return i;
        }
    }
    prof_grow((void **)&b->strs, &b->strs_cap, b->nstrs + 1, sizeof *b->strs, WHO);
    uint32_t i = (uint32_t)b->nstrs++;
    b->strs[i] = copy;
    prof_map_put(&b->str_map, key, i, WHO);
    return i;
}

static uint32_t intern(ProfPprof *b, const char *s) { return intern_n(b, s, strlen(s)); }

ProfPprof *prof_pprof_new(void) {
    ProfPprof *b = calloc(1, sizeof *b);
    if (b != NULL) intern(b, ""); /* string_table[0] must be the empty string */
    return b;
}

void prof_pprof_free(ProfPprof *b) {
    if (b == NULL) return;
    for (size_t i = 0; i < b->nstrs; i++) free(b->strs[i]);
    free(b->strs);
    prof_map_free(&b->str_map);
    free(b->fns);
    prof_map_free(&b->fn_map);
    free(b->locs);
    prof_map_free(&b->loc_map);
    free(b->types);
    free(b->samples);
    free(b->pool);
    free(b);
}

uint32_t prof_pprof_type(ProfPprof *b, const char *type, const char *unit) {
    uint32_t t = intern(b, type), u = intern(b, unit);
    for (size_t i = 0; i < b->ntypes; i++)
        if (b->types[2 * i] == t) return (uint32_t)i;
    prof_grow((void **)&b->types, &b->types_cap, 2 * b->ntypes + 2, sizeof *b->types, WHO);
    b->types[2 * b->ntypes] = t;
    b->types[2 * b->ntypes + 1] = u;
    return (uint32_t)b->ntypes++;
}

static uint32_t function(ProfPprof *b, const char *name) {
    uint32_t nm = intern(b, name);
    uint32_t f = prof_map_get(&b->fn_map, nm);
    if (f != PROF_MAP_NONE) return f;
    const char *file;
    size_t flen;
    unsigned long line;
    Fn fn = {nm, 0, 0};
    if (prof_name_split(name, &file, &flen, &line) == 0) {
        fn.file = intern_n(b, file, flen);
        fn.line = (uint32_t)line;
    }
    prof_grow((void **)&b->fns, &b->fns_cap, b->nfns + 1, sizeof *b->fns, WHO);
    f = (uint32_t)b->nfns++;
    b->fns[f] = fn;
    prof_map_put(&b->fn_map, nm, f, WHO);
    return f;
}

uint64_t prof_pprof_frame(ProfPprof *b, const char *name, unsigned long line) {
    uint32_t f = function(b, name);
    uint32_t l = line ? (uint32_t)line : b->fns[f].line;
    uint64_t key = (uint64_t)f << 32 | l;
    uint32_t i = prof_map_get(&b->loc_map, key);
    if (i == PROF_MAP_NONE) {
        prof_grow((void **)&b->locs, &b->locs_cap, b->nlocs + 1, sizeof *b->locs, WHO);
        i = (uint32_t)b->nlocs++;
        b->locs[i] = (Loc){f, l};
        prof_map_put(&b->loc_map, key, i, WHO);
    }
    return (uint64_t)i + 1;
}

void prof_pprof_sample(ProfPprof *b, const uint64_t *locs, size_t n, uint32_t type, uint64_t value,
                       uint64_t thread) {
    if (value == 0) return;
    prof_grow((void **)&b->pool, &b->pool_cap, b->pool_len + n, sizeof *b->pool, WHO);
    prof_grow((void **)&b->samples, &b->samples_cap, b->nsamples + 1, sizeof *b->samples, WHO);
    if (n) memcpy(b->pool + b->pool_len, locs, n * sizeof *locs);
    b->samples[b->nsamples++] = (Sample){b->pool_len, (uint32_t)n, type, value, thread};
    b->pool_len += n;
}

int prof_pprof_report(FILE *out, const ProfReportOpts *o, int (*add)(ProfPprof *b, void *st, const ProfReportOpts *o),
                      void *st) {
    if (o->pprof != NULL) return add(o->pprof, st, o);
    ProfPprof *b = prof_pprof_new();
    if (b == NULL) return -1;
    int rc = add(b, st, o);
    if (rc == 0) rc = prof_pprof_write(b, out, o);
    prof_pprof_free(b);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Encoding                                                               */
/* ---------------------------------------------------------------------- */

/* The generated structs, filled to point into the builder and into arrays allocated here
 * (freed by encoded_free); nothing in them is owned by protobuf-c. */
typedef struct Encoded {
    Perftools__Profiles__Profile p;
    Perftools__Profiles__ValueType *types, **typep;
    Perftools__Profiles__Sample *samples, **samplep;
    int64_t *values;
    Perftools__Profiles__Label *labels, **labelp;
    Perftools__Profiles__Location *locs, **locp;
    Perftools__Profiles__Line *lines, **linep;
    Perftools__Profiles__Function *fns, **fnp;
    Perftools__Profiles__Mapping map, *mapp;
    int64_t comments[2];
} Encoded;

static void encoded_free(Encoded *e) {
    free(e->types), free(e->typep), free(e->samples), free(e->samplep), free(e->values);
    free(e->labels), free(e->labelp), free(e->locs), free(e->locp), free(e->lines), free(e->linep);
    free(e->fns), free(e->fnp);
}

/* Allocates [n] elements of [size] bytes (at least one, so malloc(0) is never asked). */
static void *alloc_n(size_t n, size_t size) { return calloc(n ? n : 1, size); }

static int fill_tables(Encoded *e, const ProfPprof *b) {
    size_t nt = b->ntypes, ns = b->nsamples, nl = b->nlocs, nf = b->nfns;
    e->types = alloc_n(nt, sizeof *e->types), e->typep = alloc_n(nt, sizeof *e->typep);
    e->samples = alloc_n(ns, sizeof *e->samples), e->samplep = alloc_n(ns, sizeof *e->samplep);
    e->values = alloc_n(ns * nt, sizeof *e->values);
    e->labels = alloc_n(ns, sizeof *e->labels), e->labelp = alloc_n(ns, sizeof *e->labelp);
    e->locs = alloc_n(nl, sizeof *e->locs), e->locp = alloc_n(nl, sizeof *e->locp);
    e->lines = alloc_n(nl, sizeof *e->lines), e->linep = alloc_n(nl, sizeof *e->linep);
    e->fns = alloc_n(nf, sizeof *e->fns), e->fnp = alloc_n(nf, sizeof *e->fnp);
    if (!e->types || !e->typep || !e->samples || !e->samplep || !e->values || !e->labels || !e->labelp ||
        !e->locs || !e->locp || !e->lines || !e->linep || !e->fns || !e->fnp)
        return -1;
    for (size_t i = 0; i < nt; i++) {
        perftools__profiles__value_type__init(&e->types[i]);
        e->types[i].type = b->types[2 * i];
        e->types[i].unit = b->types[2 * i + 1];
        e->typep[i] = &e->types[i];
    }
    for (size_t i = 0; i < nf; i++) {
        Perftools__Profiles__Function *f = &e->fns[i];
        perftools__profiles__function__init(f);
        f->id = i + 1;
        f->name = f->system_name = b->fns[i].name;
        f->filename = b->fns[i].file;
        f->start_line = b->fns[i].line;
        e->fnp[i] = f;
    }
    for (size_t i = 0; i < nl; i++) {
        Perftools__Profiles__Line *ln = &e->lines[i];
        perftools__profiles__line__init(ln);
        ln->function_id = (uint64_t)b->locs[i].fn + 1;
        ln->line = b->locs[i].line;
        e->linep[i] = ln;
        Perftools__Profiles__Location *l = &e->locs[i];
        perftools__profiles__location__init(l);
        l->id = i + 1;
        l->mapping_id = 1;
        l->n_line = 1;
        l->line = &e->linep[i];
        e->locp[i] = l;
    }
    return 0;
}

static void fill_samples(Encoded *e, const ProfPprof *b, uint32_t thread_key) {
    size_t nt = b->ntypes;
    for (size_t i = 0; i < b->nsamples; i++) {
        const Sample *s = &b->samples[i];
        Perftools__Profiles__Sample *ps = &e->samples[i];
        perftools__profiles__sample__init(ps);
        ps->n_location_id = s->n;
        ps->location_id = s->n ? b->pool + s->off : NULL;
        ps->n_value = nt;
        ps->value = e->values + i * nt; /* zeroed by calloc but for this sample's type */
        ps->value[s->type] = (int64_t)s->value;
        if (s->thread != PROF_PPROF_NO_THREAD) {
            perftools__profiles__label__init(&e->labels[i]);
            e->labels[i].key = thread_key;
            e->labels[i].num = (int64_t)s->thread;
            e->labelp[i] = &e->labels[i];
            ps->n_label = 1;
            ps->label = &e->labelp[i];
        }
        e->samplep[i] = ps;
    }
}

/* Compresses [len] bytes of [data] as one gzip member onto [out]. */
static int gzip_write(const uint8_t *data, size_t len, FILE *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    unsigned char *buf = malloc(OUT_CHUNK);
    int rc = buf ? 0 : -1;
    z.next_in = (Bytef *)data;
    int zr = Z_OK;
    while (rc == 0 && zr != Z_STREAM_END) {
        /* avail_in is 32 bits: feed at most 1 GiB at a time */
        size_t left = len - (size_t)((const uint8_t *)z.next_in - data);
        z.avail_in = (uInt)(left > (1u << 30) ? (1u << 30) : left);
        int flush = left > z.avail_in ? Z_NO_FLUSH : Z_FINISH;
        do {
            z.next_out = buf;
            z.avail_out = OUT_CHUNK;
            zr = deflate(&z, flush);
            if (zr == Z_STREAM_ERROR) rc = -1;
            size_t have = OUT_CHUNK - z.avail_out;
            if (rc == 0 && have && fwrite(buf, 1, have, out) != have) rc = -1;
        } while (rc == 0 && z.avail_out == 0);
        if (flush == Z_NO_FLUSH && z.avail_in != 0) rc = -1; /* deflate keeps nothing back */
    }
    deflateEnd(&z);
    free(buf);
    return rc;
}

int prof_pprof_write(ProfPprof *b, FILE *out, const ProfReportOpts *o) {
    Encoded e;
    memset(&e, 0, sizeof e);
    /* Strings the encoding itself needs, interned before string_table is taken. */
    uint32_t thread_key = intern(b, "thread"), mapping_name = intern(b, "tandem");
    size_t ncomments = 0;
    if (prof_scale(o) != 1.0) {
        char note[128];
        snprintf(note, sizeof note, "estimates from sampling at rate %g: counts scaled by 1/%g", o->sample_rate,
                 o->sample_rate);
        e.comments[ncomments++] = intern(b, note);
    }
    if (o->partial) e.comments[ncomments++] = intern(b, "partial profile: the program was interrupted");
    if (fill_tables(&e, b) != 0) {
        encoded_free(&e);
        return -1;
    }
    fill_samples(&e, b, thread_key);
    /* One mapping that says the frames are already symbolized, so readers do not look for
     * a binary to resolve addresses in (there are none: locations are source lines). */
    perftools__profiles__mapping__init(&e.map);
    e.map.id = 1;
    e.map.filename = mapping_name;
    e.map.has_functions = e.map.has_filenames = e.map.has_line_numbers = 1;
    e.mapp = &e.map;
    Perftools__Profiles__Profile *p = &e.p;
    perftools__profiles__profile__init(p);
    p->n_sample_type = b->ntypes, p->sample_type = e.typep;
    p->n_sample = b->nsamples, p->sample = e.samplep;
    p->n_mapping = 1, p->mapping = &e.mapp;
    p->n_location = b->nlocs, p->location = e.locp;
    p->n_function = b->nfns, p->function = e.fnp;
    p->n_string_table = b->nstrs, p->string_table = b->strs;
    p->n_comment = ncomments, p->comment = e.comments;
    if (b->ntypes) p->default_sample_type = b->types[0];
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0) p->time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    size_t len = perftools__profiles__profile__get_packed_size(p);
    uint8_t *buf = malloc(len ? len : 1);
    int rc = -1;
    if (buf != NULL && perftools__profiles__profile__pack(p, buf) == len) rc = gzip_write(buf, len, out);
    free(buf);
    encoded_free(&e);
    return rc || ferror(out) ? -1 : 0;
}
