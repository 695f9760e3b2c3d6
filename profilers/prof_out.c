/* prof_out.c: what the analyses share (prof_out.h): hash map, arrays, threads, report
 * writers, source files for annotate; and prof_error_rate (prof_api.h), the CAB paper's sampling error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "prof_out.h"

/* ====================================================================== */
/* Memory                                                                  */
/* ====================================================================== */

void prof_oom(const char *who) {
    fprintf(stderr, "%s: out of memory\n", who);
    abort();
}

void prof_grow(void **p, size_t *cap, size_t need, size_t elem, const char *who) {
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem) prof_oom(who);
        c *= 2;
    }
    void *q = realloc(*p, c * elem);
    if (q == NULL) prof_oom(who);
    memset((char *)q + *cap * elem, 0, (c - *cap) * elem);
    *p = q;
    *cap = c;
}

/* ====================================================================== */
/* ProfMap                                                                 */
/* ====================================================================== */

static void map_insert(ProfMapSlot *slots, size_t mask, uint64_t key, uint32_t val) {
    size_t i = (size_t)prof_hash64(key) & mask;
    while (slots[i].val != PROF_MAP_NONE) i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].val = val;
}

void prof_map_put(ProfMap *m, uint64_t key, uint32_t val, const char *who) {
    size_t cap = m->slots ? m->mask + 1 : 0;
    if (2 * (m->n + 1) > cap) { /* keep the load factor at most 1/2 */
        size_t ncap = cap ? cap * 2 : 64;
        ProfMapSlot *s = malloc(ncap * sizeof *s);
        if (s == NULL) prof_oom(who);
        for (size_t i = 0; i < ncap; i++) s[i].val = PROF_MAP_NONE;
        for (size_t i = 0; i < cap; i++)
            if (m->slots[i].val != PROF_MAP_NONE) map_insert(s, ncap - 1, m->slots[i].key, m->slots[i].val);
        free(m->slots);
        m->slots = s;
        m->mask = ncap - 1;
    }
    map_insert(m->slots, m->mask, key, val);
    m->n++;
}

void prof_map_free(ProfMap *m) {
    free(m->slots);
    m->slots = NULL;
    m->mask = 0;
    m->n = 0;
}

uint32_t prof_threads_find(ProfThreads *t, uint64_t id, int *added, const char *who) {
    uint32_t i = prof_map_get(&t->ids, id);
    *added = 0;
    if (i != PROF_MAP_NONE) return i;
    i = t->n++;
    prof_map_put(&t->ids, id, i, who);
    *added = 1;
    return i;
}

/* ====================================================================== */
/* Reports                                                                 */
/* ====================================================================== */

uint64_t prof_est(uint64_t c, const ProfReportOpts *o) {
    double s = prof_scale(o);
    if (s == 1.0) return c;
    return (uint64_t)llround((double)c * s);
}

void prof_text_notes(FILE *out, const ProfReportOpts *o) {
    if (o->shadow && o->sample_rate < 1e-200) /* vm_prof.c's stand-in for 0 */
        fprintf(out, "  estimates from shadow profiling: no shadow's events were analysed (coverage 0)\n");
    else if (o->shadow)
        fprintf(out, "  estimates from shadow profiling: the shadows covered %g of the run (ticks): counts are "
                     "observed counts scaled by 1/%g\n", o->sample_rate, o->sample_rate);
    else if (prof_scale(o) != 1.0)
        fprintf(out, "  estimates from sampling at rate %g: counts are observed counts scaled by 1/%g\n",
                o->sample_rate, o->sample_rate);
    if (o->partial) fprintf(out, "  partial profile: the program was interrupted\n");
}

/* Length of the valid UTF-8 sequence at [s] (1..4), or 0 if it is not one (overlong forms,
 * surrogates and code points past U+10FFFF are invalid, RFC 3629). */
static size_t utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x3fu >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

void prof_json_str(FILE *out, const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    putc('"', out);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc((int)c, out);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            s++;
        } else {
            size_t n = utf8_len(s);
            if (n == 0) {
                fputs("\\ufffd", out);
                s++;
            } else {
                fwrite(s, 1, n, out);
                s += n;
            }
        }
    }
    putc('"', out);
}

void prof_json_num(FILE *out, double x) {
    if (!isfinite(x)) { /* JSON has no NaN or infinities */
        fputs("null", out);
        return;
    }
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back exactly */
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    fputs(buf, out);
}

void prof_json_begin(FILE *out, const char *analysis, const ProfReportOpts *o) {
    double rate = o->sample_rate > 0.0 && (o->sample_rate <= 1.0 || o->shadow) ? o->sample_rate : 1.0;
    fputs("{\"analysis\":", out);
    prof_json_str(out, analysis);
    fputs(",\"version\":1,\"sample_rate\":", out);
    prof_json_num(out, rate);
    fprintf(out, ",\"estimated\":%s,\"partial\":%s", prof_scale(o) != 1.0 || o->shadow ? "true" : "false",
            o->partial ? "true" : "false");
    if (o->shadow) fputs(",\"shadow\":true", out); /* sample_rate is the shadows' coverage */
}

void prof_folded_frame(FILE *out, const char *name) {
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (c == ';') c = ',';
        else if (c == '\n' || c == '\r') c = ' ';
        putc(c, out);
    }
}

/* The display names are vm/prof/vm_prof.c's: "name (chunk:line)", "main chunk (chunk)" and
 * "function <chunk:line>"; chunk names may hold parentheses and colons themselves
 * ("dir/prog (v2).lua", [string "..."]), function names do not: split at the first " (" or
 * " <", and take ":digits" off the end when there. */
int prof_name_split(const char *name, const char **file, size_t *flen, unsigned long *line) {
    size_t n = strlen(name);
    if (n < 4) return -1;
    char close = name[n - 1];
    const char *open = close == ')' ? strstr(name, " (") : close == '>' ? strstr(name, " <") : NULL;
    if (open == NULL) return -1;
    const char *in = open + 2, *end = name + n - 1; /* the chunk is [in, end) */
    if (in >= end) return -1;
    const char *d = end;
    while (d > in && d[-1] >= '0' && d[-1] <= '9') d--;
    unsigned long l = 0;
    if (d < end && d > in + 1 && d[-1] == ':') {
        for (const char *k = d; k < end; k++) l = l * 10 + (unsigned long)(*k - '0');
        end = d - 1;
    }
    *file = in;
    *flen = (size_t)(end - in);
    *line = l;
    return 0;
}

void prof_cg_header_events(FILE *out, const char *creator, const ProfReportOpts *o, const char *events,
                           const uint64_t *totals, int n) {
    fprintf(out, "# callgrind format\nversion: 1\ncreator: tandem %s\n", creator);
    if (o->shadow)
        fprintf(out, "# estimates from shadow profiling at coverage %g: counts scaled by 1/%g\n", o->sample_rate,
                o->sample_rate);
    else if (prof_scale(o) != 1.0)
        fprintf(out, "# estimates from sampling at rate %g: counts scaled by 1/%g\n", o->sample_rate,
                o->sample_rate);
    if (o->partial) fputs("# partial profile: the program was interrupted\n", out);
    fprintf(out, "positions: line\nevents: %s\nsummary:", events);
    for (int i = 0; i < n; i++) fprintf(out, " %llu", (unsigned long long)totals[i]);
    fputs("\n\n", out);
}

void prof_cg_header(FILE *out, const char *creator, const ProfReportOpts *o, uint64_t total) {
    prof_cg_header_events(out, creator, o, "Calls", &total, 1);
}

static void cg_text(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n && s[i]; i++) putc(s[i] == '\n' || s[i] == '\r' ? ' ' : s[i], out);
}

unsigned long prof_cg_fn(FILE *out, const char *pfx, const char *name) {
    const char *file;
    size_t flen;
    unsigned long line;
    fprintf(out, "%sfl=", pfx);
    if (prof_name_split(name, &file, &flen, &line) == 0) {
        cg_text(out, file, flen);
    } else {
        fputs("???", out);
        line = 0;
    }
    fprintf(out, "\n%sfn=", pfx);
    cg_text(out, name, SIZE_MAX);
    putc('\n', out);
    return line;
}

/* ====================================================================== */
/* Sampling error (prof_api.h)                                             */
/* ====================================================================== */

double prof_error_rate(const double *actual, const double *sampled, size_t n, double rate) {
    if (!(rate > 0.0)) return NAN;
    double sum = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(actual[i] > 0.0)) continue; /* undefined for an item that never happened */
        sum += fabs(actual[i] - sampled[i] / rate) / actual[i];
        k++;
    }
    return k ? sum / (double)k : NAN;
}

/* ---------------------------------------------------------------------- */
/* Source files (annotate)                                                */
/* ---------------------------------------------------------------------- */

char **prof_read_lines(const char *path, size_t *n, const char *who) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    char **v = NULL;
    size_t cap = 0, len = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t r;
    while ((r = getline(&line, &lcap, f)) >= 0) {
        if (r > 0 && line[r - 1] == '\n') line[--r] = '\0';
        if (r > 0 && line[r - 1] == '\r') line[--r] = '\0';
        prof_grow((void **)&v, &cap, len + 1, sizeof *v, who);
        v[len++] = line;
        line = NULL;
        lcap = 0;
    }
    free(line);
    fclose(f);
    *n = len;
    if (v == NULL) v = calloc(1, sizeof *v); /* an empty file: no lines, not an error */
    return v;
}

void prof_free_lines(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}
