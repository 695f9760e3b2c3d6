/* vm_prof.c: profiling on the VM side (vm_prof.h): function ids and names, the sink, and
 * the lifecycle of a profiled run (ring + analyzer pool, or the inline analysis). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_compile.h"
#include "vm_prof.h"

bool vm_prof_instrumented = false;
VmProfSink vm_prof_sink = {NULL, NULL, NULL};

/* ======================================================================
 * Function ids and names
 * ====================================================================== */

/* names[id]: display name of function id (malloc'd); ids are dense from 1. */
static struct {
    pthread_mutex_t lock;
    uint32_t next; /* last id given */
    char **names;
    size_t cap;
} reg = {PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0};

static _Noreturn void oom(void) {
    fprintf(stderr, "tandem: profiler: out of memory\n");
    abort();
}

uint32_t vm_prof_newid(Proto *p) {
    char chunk[VM_IDSIZE];
    if (p->source != NULL)
        vm_chunkid(chunk, sizeof chunk, p->source->data, p->source->len);
    else
        snprintf(chunk, sizeof chunk, "?");
    char buf[VM_IDSIZE + 128];
    if (p->linedefined == 0)
        snprintf(buf, sizeof buf, "main chunk (%s)", chunk);
    else if (p->name != NULL)
        snprintf(buf, sizeof buf, "%.100s (%s:%d)", p->name->data, chunk, (int)p->linedefined);
    else
        snprintf(buf, sizeof buf, "function <%s:%d>", chunk, (int)p->linedefined);
    char *name = strdup(buf);
    if (name == NULL) oom();

    pthread_mutex_lock(&reg.lock);
    uint32_t id = p->id; /* another native thread may have been first */
    if (id == 0) {
        id = ++reg.next;
        if (id >= reg.cap) {
            size_t cap = reg.cap ? reg.cap * 2 : 256;
            char **n = realloc(reg.names, cap * sizeof *n);
            if (n == NULL) oom();
            memset(n + reg.cap, 0, (cap - reg.cap) * sizeof *n);
            reg.names = n;
            reg.cap = cap;
        }
        reg.names[id] = name;
        name = NULL;
        __atomic_store_n(&p->id, id, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&reg.lock);
    free(name);
    return id;
}

const char *vm_prof_funcname(uint32_t id) {
    pthread_mutex_lock(&reg.lock);
    const char *n = id < reg.cap && reg.names[id] ? reg.names[id] : "?";
    pthread_mutex_unlock(&reg.lock);
    return n;
}

static const char *fname_cb(uint32_t id, void *ctx) {
    (void)ctx;
    return vm_prof_funcname(id);
}

/* ======================================================================
 * Lifecycle
 * ====================================================================== */

static struct {
    bool active;
    VmProfOptions opt;
    void *st;                /* the analysis's state */
    CabProducer producer;    /* the main native thread's ring (concurrent) */
    CabAnalyzerPool *pool;
} run;

/* Events after the run's end (finalizers at exit) go nowhere. */
static void discard(void *st, const uint64_t *ev, size_t n) {
    (void)st, (void)ev, (void)n;
}

static void finish_atexit(void) { vm_prof_finish(); }

bool vm_prof_start(const VmProfOptions *o, const char **err) {
    if (o->analysis == NULL) return true;
    run.opt = *o;
    run.st = o->analysis->open();
    if (run.st == NULL) {
        *err = "profiler: out of memory";
        return false;
    }
    if (o->sequential) {
        vm_prof_sink = (VmProfSink){NULL, o->analysis->consume, run.st};
    } else {
        CabRing *ring = cab_ring_new(&o->cab, NULL, &run.producer, err);
        if (ring == NULL) return false;
        run.pool = cab_analyzer_start(o->analyzers > 0 ? o->analyzers : 1, o->analyzer_cpus, err);
        if (run.pool == NULL) {
            cab_ring_free(ring);
            return false;
        }
        CabConsumer c = {o->analysis->consume, NULL, run.st};
        cab_analyzer_register(run.pool, ring, &c, -1);
        vm_prof_sink = (VmProfSink){&run.producer, NULL, NULL};
    }
    run.active = true;
    vm_prof_instrumented = true;
    atexit(finish_atexit);
    return true;
}

int vm_prof_finish(void) {
    if (!run.active) return 0;
    run.active = false;
    if (run.pool != NULL) {
        /* Close before anything else can emit: finalizers run later go to discard. */
        vm_prof_sink = (VmProfSink){NULL, discard, NULL};
        cab_close(&run.producer);
        cab_analyzer_shutdown(run.pool); /* drains the residue, frees the ring */
        run.pool = NULL;
    } else {
        vm_prof_sink = (VmProfSink){NULL, discard, NULL};
    }
    fflush(stdout);
    const ProfAnalysis *a = run.opt.analysis;
    int rc;
    if (run.opt.out == NULL) {
        rc = a->report(run.st, stderr, fname_cb, NULL);
    } else {
        /* Atomically: a reader sees the old file or the whole new one. */
        size_t len = strlen(run.opt.out) + 32;
        char *tmp = malloc(len);
        if (tmp == NULL) oom();
        snprintf(tmp, len, "%s.tmp%ld", run.opt.out, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (f == NULL) {
            fprintf(stderr, "tandem: cannot write profile '%s': %s\n", tmp, strerror(errno));
            free(tmp);
            a->close(run.st);
            run.st = NULL;
            return -1;
        }
        rc = a->report(run.st, f, fname_cb, NULL);
        if (fclose(f) != 0) rc = -1;
        if (rc == 0 && rename(tmp, run.opt.out) != 0) rc = -1;
        if (rc != 0) {
            fprintf(stderr, "tandem: cannot write profile '%s': %s\n", run.opt.out, strerror(errno));
            unlink(tmp);
        }
        free(tmp);
    }
    a->close(run.st);
    run.st = NULL;
    return rc;
}
