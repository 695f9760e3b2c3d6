/* cli_parse.c: the one number grammar of the command line: counts, sizes, fractions, and
 * cache geometries built from them (cli_parse.h). Every -X option that takes a number parses it
 * here, so "2m" means the same to -Xcab.size, -Xgc.maxheap and -Xcachesim.l1. */
#include <errno.h>
#include <stdlib.h>

#include "cli_parse.h"

/* Decimal digits, then (when [suffix]) one of k, m, g (powers of 1024, either case) and an
 * optional b. On success *out is the value and *end the first character not taken. */
static bool scan(const char *s, bool suffix, uint64_t *out, const char **end) {
    if (s == NULL || *s < '0' || *s > '9') return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (suffix) {
        unsigned shift = 0;
        switch (*s) {
        case 'k': case 'K': shift = 10; s++; break;
        case 'm': case 'M': shift = 20; s++; break;
        case 'g': case 'G': shift = 30; s++; break;
        default: break;
        }
        if (shift != 0 && (*s == 'b' || *s == 'B')) s++;
        if (v > (UINT64_MAX >> shift)) return false;
        v <<= shift;
    }
    *out = v;
    *end = s;
    return true;
}

bool cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    const char *end;
    uint64_t v;
    if (!scan(s, false, &v, &end) || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    const char *end;
    uint64_t v;
    if (!scan(s, true, &v, &end) || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_fraction(const char *s, double *out) {
    if (s == NULL || *s == '\0' || *s == ' ') return false;
    char *end;
    errno = 0;
    double r = strtod(s, &end);
    if (end == s || errno != 0) return false;
    if (*end == '%') {
        r /= 100.0;
        end++;
    }
    if (*end != '\0' || !(r > 0 && r <= 1)) return false;
    *out = r;
    return true;
}

bool cli_parse_geometry(const char *s, uint64_t *size, uint64_t *ways) {
    const char *end;
    uint64_t sz, w;
    if (!scan(s, true, &sz, &end) || *end != ':') return false;
    if (!scan(end + 1, false, &w, &end) || *end != '\0') return false;
    *size = sz;
    *ways = w;
    return true;
}
