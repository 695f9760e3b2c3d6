/* prof_html.c: -Xprofile.format=html: one self-contained page (prof_api.h prof_html_report):
 * the analyses' JSON reports, the run's facts and the profiled functions' sources as one JSON
 * object in a <script type="application/json"> element, and the viewer (html/viewer.js,
 * html/viewer.css, compiled into the binary by html/embed.cmake) that draws it: flame graph,
 * call graph, hot paths and annotated source, cache misses, input-size plots. Nothing is
 * fetched when the page opens.
 *
 * Embedding. The data is built in memory, then copied into the page with every '<' written
 * as \u003c: JSON has '<' only inside strings, where the escape means the same character, so
 * the object is unchanged for JSON.parse while no "</script>" or "<!--" can end or confuse
 * the script element, whatever a function name or a source line holds. The viewer's own text
 * is checked at build time (embed.cmake refuses "</script" and "</style"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"

#define WHO "html"
/* A source file larger than this is left out of the page (its lines show counts only):
 * a generated file of tens of megabytes would make the page too slow to open. */
#define MAX_SOURCE_BYTES (4u << 20)

/* The viewer, generated from html/viewer.js and html/viewer.css at build time
 * (prof_html_assets.c); NUL-terminated. */
extern const unsigned char prof_html_viewer_js[];
extern const unsigned char prof_html_viewer_css[];

/* ====================================================================== */
/* The data object                                                         */
/* ====================================================================== */

static void run_json(FILE *d, const ProfRunFacts *run) {
    fputs("\"run\":{\"argv\":[", d);
    for (int i = 0; i < run->argc; i++) {
        if (i) putc(',', d);
        prof_json_str(d, run->argv[i] ? run->argv[i] : "");
    }
    fputs("],\"analysis\":", d);
    prof_json_str(d, run->analysis ? run->analysis : "");
    fputs(",\"threads\":", d);
    prof_json_str(d, run->threads ? run->threads : "");
    fputs(",\"sampling\":", d);
    prof_json_str(d, run->sampling ? run->sampling : "");
    fputs(",\"streams\":[", d);
    for (int i = 0; i < run->nstreams; i++) {
        const ProfRunStream *s = &run->streams[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", d);
        prof_json_str(d, s->name ? s->name : "");
        fprintf(d, ",\"produced\":%llu,\"consumed\":%llu,\"dropped\":%llu}", (unsigned long long)s->produced,
                (unsigned long long)s->consumed, (unsigned long long)s->dropped);
    }
    fputs("]}", d);
}

/* One source file as a JSON array of its lines (line breaks and a trailing '\r' dropped), or
 * null when it cannot be read or is too large. */
static void file_json(FILE *d, const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    if (f != NULL) {
        buf = malloc(MAX_SOURCE_BYTES + 1);
        if (buf == NULL) prof_oom(WHO);
        n = fread(buf, 1, MAX_SOURCE_BYTES + 1, f);
        if (ferror(f) || n > MAX_SOURCE_BYTES) n = SIZE_MAX;
        fclose(f);
    }
    if (f == NULL || n == SIZE_MAX) {
        fputs("null", d);
        free(buf);
        return;
    }
    buf[n] = '\0';
    putc('[', d);
    char *line = buf;
    for (int first = 1; line < buf + n; first = 0) {
        char *nl = memchr(line, '\n', (size_t)(buf + n - line));
        char *end = nl ? nl : buf + n;
        if (end > line && end[-1] == '\r') end[-1] = '\0';
        *end = '\0';
        if (!first) putc(',', d);
        prof_json_str(d, line); /* a NUL inside a line cuts it there: source has none */
        line = end + 1;
    }
    putc(']', d);
    free(buf);
}

/* "functions": [{"id", "name", "file", "first", "last"}] for every function id the runtime
 * gave (dense from 1, so the first id fsource does not know ends the list), and, when
 * [sources], "files": {path: [lines]} for the files they came from. */
static void functions_json(FILE *d, const ProfReportOpts *o, int sources) {
    fputs(",\"functions\":[", d);
    char **files = NULL;
    size_t nfiles = 0, cap = 0;
    ProfSource src;
    for (uint32_t id = 1; o->fsource != NULL && o->fsource(id, &src, o->ctx) == 0; id++) {
        fprintf(d, "%s\n{\"id\":%u,\"name\":", id > 1 ? "," : "", id);
        prof_json_str(d, o->fname(id, o->ctx));
        fputs(",\"file\":", d);
        if (src.file) prof_json_str(d, src.file);
        else fputs("null", d);
        fprintf(d, ",\"first\":%d,\"last\":%d}", src.first, src.last);
        if (!sources || src.file == NULL) continue;
        size_t k = 0;
        while (k < nfiles && strcmp(files[k], src.file) != 0) k++;
        if (k < nfiles) continue;
        prof_grow((void **)&files, &cap, nfiles + 1, sizeof *files, WHO);
        files[nfiles++] = (char *)src.file; /* the runtime's string, alive through the report */
    }
    fputs("],\n\"files\":{", d);
    for (size_t k = 0; k < nfiles; k++) {
        if (k) fputs(",\n", d);
        prof_json_str(d, files[k]);
        putc(':', d);
        file_json(d, files[k]);
    }
    fputs("}", d);
    free(files);
}

/* The whole data object into [d]; -1 if an analysis failed to write its report. */
static int data_json(FILE *d, const ProfAnalysis *const *an, void *const *st, int n, const ProfReportOpts *o,
                     const ProfRunFacts *run) {
    ProfReportOpts jo = *o;
    jo.format = PROF_JSON;
    int sources = 0;
    fputs("{\"format\":\"tandem-profile-html\",\"version\":1,", d);
    run_json(d, run);
    fputs(",\n\"analyses\":[", d);
    for (int i = 0; i < n; i++) {
        if (i) fputs(",\n", d);
        /* Every analysis has a JSON report; it ends with a newline, which JSON allows. */
        if (an[i]->report(st[i], d, &jo) != 0) return -1;
        sources |= (an[i]->needs & (PROF_NEED_PATH | PROF_NEED_PC)) != 0; /* paths, misses name source lines */
    }
    fputs("]", d);
    functions_json(d, o, sources);
    fputs("}", d);
    return ferror(d) ? -1 : 0;
}

/* ====================================================================== */
/* The page                                                                */
/* ====================================================================== */

/* [s] with every '<' as \u003c (the header comment: valid inside JSON strings, the only
 * place JSON has one). */
static void put_script_safe(FILE *out, const char *s, size_t n) {
    const char *end = s + n;
    while (s < end) {
        const char *lt = memchr(s, '<', (size_t)(end - s));
        size_t k = lt ? (size_t)(lt - s) : (size_t)(end - s);
        fwrite(s, 1, k, out);
        if (lt == NULL) break;
        fputs("\\u003c", out);
        s = lt + 1;
    }
}

int prof_html_report(FILE *out, const ProfAnalysis *const *an, void *const *st, int n, const ProfReportOpts *o,
                     const ProfRunFacts *run) {
    char *data = NULL;
    size_t len = 0;
    FILE *d = open_memstream(&data, &len);
    if (d == NULL) prof_oom(WHO);
    int rc = data_json(d, an, st, n, o, run);
    if (fclose(d) != 0) prof_oom(WHO);
    if (rc != 0) {
        free(data);
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>tandem profile</title>\n<style>\n",
          out);
    fputs((const char *)prof_html_viewer_css, out);
    fputs("</style>\n</head>\n<body>\n<noscript>This report is drawn by JavaScript; its data is the JSON "
          "object in the script element with id profile-data.</noscript>\n<div id=\"app\"></div>\n"
          "<script type=\"application/json\" id=\"profile-data\">",
          out);
    put_script_safe(out, data, len);
    fputs("</script>\n<script>\n", out);
    fputs((const char *)prof_html_viewer_js, out);
    fputs("</script>\n</body>\n</html>\n", out);
    free(data);
    return ferror(out) ? -1 : 0;
}
