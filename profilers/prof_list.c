/* prof_list.c: the analyses by name (prof_api.h). */
#include <string.h>

#include "prof_api.h"

/* Grep PROF_NAMES: this array and the string below list the same analyses, in order. */
static const ProfAnalysis *const analyses[] = {&prof_methodcount, &prof_callgraph, &prof_calltree,
                                               &prof_cachesim, &prof_pathprof, &prof_inputsize};

const ProfAnalysis *prof_find(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof analyses / sizeof analyses[0]; i++)
        if (strlen(analyses[i]->name) == len && memcmp(analyses[i]->name, name, len) == 0)
            return analyses[i];
    return NULL;
}

const char *prof_names(void) { return "methodcount, callgraph, calltree, cachesim, pathprof, inputsize"; /* PROF_NAMES */ }
