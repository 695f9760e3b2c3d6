/* cli_parse.h: the one number grammar of the command line (cli_parse.c), a leaf (standard
 * headers only) so the benchmark drivers read their sizes with it too. */
#ifndef CLI_PARSE_H
#define CLI_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Each returns false, leaving *out alone, unless the whole
 * of [s] is a number in [lo, hi].
 *   count:    decimal digits ("16384");
 *   size:     decimal digits with an optional suffix k, m or g (powers of 1024, either case)
 *             and an optional b after it ("2m", "512k", "32kb", "4096");
 *   fraction: a number in (0, 1], or a percentage of one ("0.05", "5%");
 *   geometry: SIZE:WAYS, a size and a count ("32k:4"). */
bool cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
bool cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
bool cli_parse_fraction(const char *s, double *out);
bool cli_parse_geometry(const char *s, uint64_t *size, uint64_t *ways);

#endif
