/* prof_pprof.h: private to profilers/: how an analysis adds its counts to a pprof profile
 * (-Xprofile.format=pprof; the builder itself, ProfPprof, is declared in prof_api.h).
 *
 * One builder collects the samples of every analysis of the run, so a run with several
 * analyses writes one profile with several sample types (methodcount's "function_calls",
 * cachesim's "l1_misses", ...), which is what pprof's -sample_index chooses between. A sample
 * has a value in its own analysis's types and 0 in the others, so every type's total is
 * exactly its analysis's total.
 *
 * Frames: a location per (function, line); the function is named by its display name
 * ("f (prog.lua:3)", the names of JSON and folded stacks, so a reader can match them), its
 * file and first line split off that name (prof_name_split). The pseudo frames "[root]" and
 * "[C]" are functions without a file.
 *
 * Allocation: malloc'd, outside the GC heap; out of memory aborts through prof_oom, as in
 * the rest of the analyses (reports run once, at the end). */
#ifndef PROF_PPROF_H
#define PROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "prof_api.h"

/* The index of sample type [type] with unit [unit] (e.g. "calls", "count"), added if new.
 * Types keep the order they were first added in; the first is the default one. */
uint32_t prof_pprof_type(ProfPprof *b, const char *type, const char *unit);

/* The location id (nonzero) of the frame named [name] (a display name) at [line] (0: the
 * function's first line, as split off its name). */
uint64_t prof_pprof_frame(ProfPprof *b, const char *name, unsigned long line);

/* No thread label (prof_pprof_sample's [thread]). */
#define PROF_PPROF_NO_THREAD UINT64_MAX

/* Adds a sample: the stack [locs] ([n] location ids, innermost first), [value] for sample
 * type [type], and when [thread] is not PROF_PPROF_NO_THREAD a numeric label "thread". A
 * zero [value] adds nothing (pprof readers drop empty samples anyway). */
void prof_pprof_sample(ProfPprof *b, const uint64_t *locs, size_t n, uint32_t type, uint64_t value,
                       uint64_t thread);

/* What an analysis's report does for PROF_PPROF: calls [add] with the builder of the run
 * ([o]->pprof) and returns its result; when there is none (a report of one analysis alone,
 * as the unit tests write them) it makes one, adds, and writes the whole gzip-compressed
 * profile to [out]. [add] returns 0 or -1 (out of memory). */
int prof_pprof_report(FILE *out, const ProfReportOpts *o, int (*add)(ProfPprof *b, void *st, const ProfReportOpts *o),
                      void *st);

#endif
