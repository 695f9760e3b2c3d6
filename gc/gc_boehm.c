/* gc_boehm.c: gc_api.h on Boehm GC; the only file that includes Boehm's headers.
 *
 * Collections. While a single thread runs VM code, Boehm collects on its own inside that
 * thread's allocations (nothing else needs stopping). Once the VM runs several
 * (gc_use_vm_trigger), Boehm's automatic collection is off: allocation only counts, and
 * once enough has been allocated since the last collection (or the heap cap is hit, or
 * stress mode says so) it calls the VM's collect hook, which brings every language thread
 * to a safepoint and calls gc_collect_now. See gc/README.md.
 *
 * Stacks follow the verified recipe of ../shared/notes/dependencies.md section 2: the
 * recorded stack bottom of a native thread is moved to the stack it switches to
 * (gc_set_stack), and every dormant stack (a native stack while its thread runs a coroutine
 * or a green thread, a suspended green thread's stack, a green thread's stack while it runs
 * a coroutine) is pushed by our push-other-roots callback from its saved stack pointer. The
 * recipe takes the allocator lock around each switch because Boehm could collect at any
 * allocation; here collections happen only while no thread runs, and a switch is made by a
 * running thread, so the lock is not needed. Coroutine stacks themselves are scanned GC
 * blocks, traced while their coroutine is reachable. */
#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_mark.h>

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gc_api.h"

/* Sanitizer builds (tests/README.md, "Sanitizers"): the compilers' feature tests. */
#ifdef __has_feature
#if __has_feature(address_sanitizer)
#define GC_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define GC_TSAN 1
#endif
#endif
#ifdef __SANITIZE_ADDRESS__
#define GC_ASAN 1
#endif
#ifdef __SANITIZE_THREAD__
#define GC_TSAN 1
#endif

/* Every linked GcStack (native stacks of registered VM threads, green stacks). The list is
 * changed and walked under Boehm's allocator lock: the push callback runs inside a collection,
 * which holds that lock from before it stops the world until after it restarts it, and
 * gc_stack_link/unlink take it around their pointer updates. A lock of our own would not do:
 * a registered native thread that has left the VM (thread_main, after its body returned) is
 * not at any safepoint, so a collection (ours, or Boehm's own while a single thread runs VM
 * code) may stop it by signal in the middle of its unlink; the walk, which cannot wait for a
 * lock a stopped thread holds, then followed a half-updated list (TSan:
 * threads/spawn_tree.lua, "Sanitizers" in tests/README.md). Under the allocator lock a
 * collection and a link/unlink exclude each other, and the lock's release/acquire orders
 * the list updates (and the GcStack's hi and spp, written before link) before the walk. */
static GcStack stacks = {NULL, NULL, &stacks, &stacks};
static _Thread_local GcStack *self;
static _Thread_local void *self_handle; /* Boehm's handle of this thread */
static GC_push_other_roots_proc prev_push;

static void (*collect_hook)(void);
static atomic_uint stress_every;
static _Thread_local unsigned stress_count;
static _Thread_local unsigned check_count;
/* Allocation volume since the last collection that triggers the next one. */
static atomic_size_t trigger_bytes = 4u << 20;
static atomic_size_t free_at_gc, heap_at_gc; /* heap figures right after the last collection */
static atomic_size_t used_at_gc;               /* bytes in use after the last collection */
static atomic_bool vm_trigger;                /* our trigger instead of Boehm's */
static atomic_bool stopped;                   /* collectgarbage("stop"): no automatic collection */
static unsigned free_space_divisor = 8;
/* The least allocation volume between two automatic collections, in both triggers. */
#define MIN_ALLOC_BETWEEN_COLLECTIONS ((size_t)256 << 10)

static void push_ready(void);

/* Runs in the collecting thread with the world stopped and the allocator lock held (so no
 * link or unlink is under way): must not allocate or lock. */
static void GC_CALLBACK push_dormant_stacks(void) {
    for (GcStack *s = stacks.next; s != &stacks; s = s->next) {
        void **spp = s->spp;
        if (spp != NULL && *spp != NULL) GC_push_all_eager(*spp, s->hi);
    }
    push_ready();
    if (prev_push) prev_push();
}

/* Neither may be called with the allocator lock held (it is not reentrant): callers are
 * running threads outside any Boehm callback. */
void gc_stack_link(GcStack *s) {
    GC_alloc_lock();
    s->next = stacks.next;
    s->prev = &stacks;
    stacks.next->prev = s;
    stacks.next = s;
    GC_alloc_unlock();
}

void gc_stack_unlink(GcStack *s) {
    GC_alloc_lock();
    s->prev->next = s->next;
    s->next->prev = s->prev;
    s->prev = s->next = NULL;
    GC_alloc_unlock();
}

static GcStack *register_self(void) {
    if (self) return self;
    GcStack *s = GC_MALLOC_UNCOLLECTABLE(sizeof *s);
    if (s == NULL) abort();
    struct GC_stack_base sb;
    self_handle = GC_get_my_stackbottom(&sb);
    s->hi = sb.mem_base;
    s->spp = NULL;
    self = s;
    gc_stack_link(s);
    return s;
}

GcStack *gc_native_stack(void) { return register_self(); }

/* Boehm warns on stderr when the heap cap is reached; the VM reports that as a Lua error
 * ("not enough memory") instead, so those warnings are dropped. Others still print. */
static void GC_CALLBACK warn(char *msg, GC_word arg) {
    if (strstr(msg, "Out of Memory") != NULL) return;
    fprintf(stderr, msg, arg);
}

static void init_weak_kind(void);

static void set_trigger(void) {
    GC_word heap = 0, free_bytes = 0;
    GC_get_heap_usage_safe(&heap, &free_bytes, NULL, NULL, NULL);
    /* Boehm's own policy with free-space divisor D, which collects when an allocation finds
     * no free memory and 2/D of the live heap has been allocated since the last collection
     * (otherwise it grows the heap): here, a collection is due once that volume has been
     * allocated and either the heap has grown or as much as was free has been allocated.
     * D = 8 keeps peak memory of allocation-heavy programs within 2x lua5.4's for a few
     * percent of time. */
    size_t live = (size_t)(heap - free_bytes);
    size_t t = 2 * live / free_space_divisor;
    if (t < MIN_ALLOC_BETWEEN_COLLECTIONS) t = MIN_ALLOC_BETWEEN_COLLECTIONS;
    atomic_store_explicit(&trigger_bytes, t, memory_order_relaxed);
    atomic_store_explicit(&free_at_gc, (size_t)free_bytes, memory_order_relaxed);
    atomic_store_explicit(&heap_at_gc, (size_t)heap, memory_order_relaxed);
}

/* Boehm's progress callback, with its allocation lock held (so the unsynchronised statistics
 * are consistent): what a finished collection left in use, for gc_heap_used. Whoever
 * started the collection (our trigger, Boehm's own, an explicit one), it ends here. */
static void after_mark(void);
static void (*collection_observer)(int end, size_t heap_used); /* gc_set_collection_observer */

static void GC_CALLBACK on_collection_event(GC_EventType ev) {
    if (ev == GC_EVENT_MARK_END) after_mark();
    if (ev == GC_EVENT_START && collection_observer) collection_observer(0, 0);
    if (ev != GC_EVENT_END) return;
    struct GC_prof_stats_s st;
    GC_get_prof_stats_unsafe(&st, sizeof st);
    size_t used = (size_t)(st.heapsize_full - st.free_bytes_full);
    atomic_store_explicit(&used_at_gc, used, memory_order_relaxed);
    if (collection_observer) collection_observer(1, used);
}

void gc_set_collection_observer(void (*fn)(int end, size_t heap_used)) { collection_observer = fn; }

/* Static roots. Boehm scans the writable segments of every loaded object as roots in every
 * collection. The libraries Tandem is linked with (libc, ld.so, libm, Zydis, hwloc, libffi,
 * readline, libgc itself, and under sanitizers their runtime) never hold a pointer into the
 * GC heap: Tandem keeps its roots in its own data, on stacks and in GC blocks, and hands
 * these libraries only malloc'd or stack memory. Their data was 180 KB of the 260 KB scanned
 * in each collection (the program's own is 80 KB), a fixed cost that small-heap programs
 * pay thousands of times a second (raytrace: 4,000 collections of a 320 KB heap). So every
 * object loaded before gc_init, except the program itself, is left out; an object loaded
 * later (a C module and what it pulls in, via dlopen) is scanned as before, since a module's
 * statics may be the only reference to a Lua value. Under sanitizers this leaves out their
 * runtime too (libtsan: 50 MB of .bss, 48 ms per collection when it was scanned), as gcc links
 * it as a shared library; clang links it into the program, which stays scanned. The names
 * are copied once, at init, before any collection; the callback runs under Boehm's allocator
 * lock, possibly with the world stopped, and only compares strings. */
#define MAX_STARTUP_OBJECTS 64
static char *startup_objects[MAX_STARTUP_OBJECTS];
static int n_startup_objects;

static int record_startup_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size, (void)data;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == '\0') return 0; /* the program itself: always scanned */
    if (n_startup_objects == MAX_STARTUP_OBJECTS) return 1; /* the rest stay scanned */
    char *copy = strdup(name);
    if (copy != NULL) startup_objects[n_startup_objects++] = copy;
    return 0;
}

static int GC_CALLBACK scan_static_data(const char *name, void *start, size_t size) {
    (void)start, (void)size;
    if (name == NULL || name[0] == '\0') return 1;
    for (int i = 0; i < n_startup_objects; i++)
        if (strcmp(name, startup_objects[i]) == 0) return 0;
    return 1;
}

void gc_init(void) {
    static bool started;
    if (started) return;
    started = true;
    /* One marker: on a 2-core machine the second core belongs to the analyzer. */
    if (getenv("GC_MARKERS") == NULL) GC_set_markers_count(1);
    dl_iterate_phdr(record_startup_object, NULL);
    GC_register_has_static_roots_callback(scan_static_data);
    GC_set_handle_fork(-1); /* forks are wrapped by hand: gc_fork_prepare (gc_api.h) */
    GC_INIT();
    const char *d = getenv("GC_FREE_SPACE_DIVISOR");
    if (d != NULL && atoi(d) > 0) free_space_divisor = (unsigned)atoi(d);
    GC_set_free_space_divisor(free_space_divisor);
    /* Boehm's own trigger, used while one thread runs VM code, is 1/D of the scanned size
     * (live heap and roots): for a small live heap a collection every ~60 KB, whose fixed
     * part (roots, stacks, block headers) then dominates (raytrace: 4,000 collections of a
     * 320 KB heap in 0.8 s). The floor is our own trigger's (set_trigger); it costs at most
     * that much more heap and keeps it within the L2 cache. */
    GC_set_min_bytes_allocd(MIN_ALLOC_BETWEEN_COLLECTIONS);
    GC_set_warn_proc(warn);
    GC_set_on_collection_event(on_collection_event);
    GC_allow_register_threads();
    init_weak_kind();
    prev_push = GC_get_push_other_roots();
    GC_set_push_other_roots(push_dormant_stacks);
    register_self();
    set_trigger();
}

void gc_fork_prepare(void) { GC_atfork_prepare(); }
void gc_fork_parent(void) { GC_atfork_parent(); }
void gc_fork_child(void) { GC_atfork_child(); }

void gc_set_collect_hook(void (*hook)(void)) { collect_hook = hook; }

void gc_use_vm_trigger(void) {
    if (atomic_exchange(&vm_trigger, true)) return;
    set_trigger();
    GC_set_disable_automatic_collection(1);
}

/* Stopping turns off both automatic triggers, Boehm's (one thread) and ours (several),
 * and stress; explicit collections (gc_collect) still run, as lua5.4's full collections do
 * while it is stopped. */
void gc_set_running(bool on) {
    atomic_store(&stopped, !on);
    GC_set_disable_automatic_collection(!on || atomic_load(&vm_trigger));
}

bool gc_running(void) { return !atomic_load(&stopped); }

#ifdef GC_TSAN
/* TSan builds only: the allocator-lock gate. Boehm stops the world by sending each registered
 * thread that is not in a blocking region (GC_do_blocking) a signal and waiting for its
 * handler to answer. TSan runs an asynchronous signal's handler at once only in a thread
 * inside a call it knows to block (pthread_cond_wait, sem_wait, nanosleep, sigwait...);
 * otherwise it defers the handler to the thread's next intercepted call. A thread waiting
 * for Boehm's allocator lock in pthread_mutex_lock, which TSan does not count as blocking,
 * therefore never answers while the collector, which holds that lock, waits for it: Boehm
 * resends the signal and finally aborts ("Signals delivery fails constantly"). Outside TSan
 * the kernel runs the handler inside the wait and nothing hangs.
 *
 * A thread RUNNING in the VM never meets a collection (that needs it at a safepoint). The
 * registered threads that may wait for the lock while one runs are found (TSan,
 * threads/spawn_tree.lua, native and green) at two places, which the gate covers:
 *   - the end of a thread started by gc_thread_start: after its body has left the VM it
 *     unlinks and frees its GcStack, and Boehm unregisters it after thread_main returns,
 *     all under the lock. The thread holds the gate from the end of its body until a
 *     thread-specific key's destructor, which glibc runs after the start routine returned,
 *     hence after Boehm's cleanup handler unregistered it (gate_hold waits in
 *     pthread_cond_wait, where TSan delivers the signal, if a collection is under way).
 *   - the entry of a blocking region: GC_do_blocking takes the lock to mark the thread
 *     blocked. A region the VM opens for a running thread (vm_ctx_blocking) cannot meet a
 *     collection (the thread counts as stopped only inside it), but a stopped one can: a
 *     safepoint waiting for an operation to end, with the safepoint lock held (it must not
 *     wait here). gc_do_blocking holds the gate until the region's function starts (the thread
 *     is marked blocked by then: no signal); if a collection is already under way it does
 *     not wait but calls the function directly, the thread staying active for Boehm: every
 *     region's function waits in a call where TSan delivers the signal (pthread_cond_wait,
 *     nanosleep, sigwait), or is a foreign call (ffi, which the TSan stage does not run).
 * A collection (gc_collect_now) starts only once no thread holds the gate, and no thread
 * takes it while one runs. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_busy;         /* threads holding the gate */
static bool gate_collecting;  /* a collection is under way */
static pthread_key_t gate_key;
static pthread_once_t gate_once = PTHREAD_ONCE_INIT;

static void gate_release(void) {
    pthread_mutex_lock(&gate_lock);
    if (--gate_busy == 0) pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_lock);
}

/* Take the gate: [wait] while a collection is under way, else give up (false). */
static bool gate_hold(bool wait) {
    pthread_mutex_lock(&gate_lock);
    while (wait && gate_collecting) pthread_cond_wait(&gate_cv, &gate_lock);
    bool held = !gate_collecting;
    if (held) gate_busy++;
    pthread_mutex_unlock(&gate_lock);
    return held;
}

static void gate_release_at_exit(void *unused) {
    (void)unused;
    gate_release();
}

static void gate_init(void) {
    if (pthread_key_create(&gate_key, gate_release_at_exit) != 0) abort();
}

static void gate_exit_begin(void) {
    pthread_once(&gate_once, gate_init);
    gate_hold(true);
    if (pthread_setspecific(gate_key, &gate_key) != 0) abort(); /* non-NULL: run the destructor */
}

static void gate_collect(bool begin) {
    pthread_mutex_lock(&gate_lock);
    if (begin) {
        while (gate_busy > 0) pthread_cond_wait(&gate_cv, &gate_lock);
        gate_collecting = true;
    } else {
        gate_collecting = false;
        pthread_cond_broadcast(&gate_cv);
    }
    pthread_mutex_unlock(&gate_lock);
}
#else
static inline void gate_exit_begin(void) {}
static inline void gate_collect(bool begin) { (void)begin; }
#endif

void gc_collect_now(void) {
    gate_collect(true);
    GC_gcollect();
    gate_collect(false);
    set_trigger();
}

void gc_collect(void) {
    if (collect_hook)
        collect_hook();
    else
        gc_collect_now();
}

/* Called before every allocation: is a collection due? Reading Boehm's byte counter is
 * unsynchronised and cheap, but not free, so it is read every 64 allocations and for every
 * large one. */
static inline void before_alloc(size_t n) {
    if (__builtin_expect(atomic_load_explicit(&stopped, memory_order_relaxed), 0)) return;
    unsigned every = atomic_load_explicit(&stress_every, memory_order_relaxed);
    if (__builtin_expect(every != 0, 0) && ++stress_count >= every) {
        stress_count = 0;
        gc_collect();
        return;
    }
    /* Explicitly freed blocks (a table's old array after a resize) count against the
     * volume, as in Boehm's own trigger. */
    if (atomic_load_explicit(&vm_trigger, memory_order_relaxed) &&
        __builtin_expect((++check_count & 63) == 0 || n >= 65536, 0)) {
        size_t since = GC_get_bytes_since_gc() - GC_get_expl_freed_bytes_since_gc();
        if (since >= atomic_load_explicit(&trigger_bytes, memory_order_relaxed) &&
            (since >= atomic_load_explicit(&free_at_gc, memory_order_relaxed) ||
             GC_get_heap_size() > atomic_load_explicit(&heap_at_gc, memory_order_relaxed)))
            gc_collect();
    }
}

/* -Xtest.alloc_fail=N (gc_set_fail_at): allocation number N (gc_alloc, gc_alloc_leaf,
 * gc_realloc, counted over every thread from the start) fails the way a heap that cannot
 * grow fails: Boehm's out-of-memory hook (GC_oom_fn, which returns NULL) answers it, as it
 * does at the -Xgc.maxheap cap. The VM collects and retries once before raising "not enough
 * memory" (vm_alloc); a real full heap would fail the retry too, so the same thread's next
 * allocation of the same size fails as well. Only that one allocation fails: a program that
 * catches the error goes on. */
static atomic_uint_fast64_t fail_at, nallocs;
static _Thread_local size_t fail_retry; /* size of the injected failure + 1, 0: none */

static bool injected_failure(size_t n) {
    if (fail_retry != 0) {
        bool same = fail_retry == n + 1;
        fail_retry = 0;
        if (same) return true;
    }
    if (atomic_fetch_add_explicit(&nallocs, 1, memory_order_relaxed) + 1 !=
        atomic_load_explicit(&fail_at, memory_order_relaxed))
        return false;
    fail_retry = n + 1;
    return true;
}

void gc_set_fail_at(uint64_t n) { atomic_store_explicit(&fail_at, n, memory_order_relaxed); }

/* Off unless -Xtest.alloc_fail: one relaxed load on the allocation path. */
#define INJECT(n)                                                                              \
    if (__builtin_expect(atomic_load_explicit(&fail_at, memory_order_relaxed) != 0, 0) &&     \
        injected_failure(n))                                                                   \
        return GC_get_oom_fn()(n);

void *gc_alloc(size_t n) {
    INJECT(n)
    before_alloc(n);
    return GC_MALLOC(n);
}

void *gc_alloc_leaf(size_t n) {
    INJECT(n)
    before_alloc(n);
    return GC_MALLOC_ATOMIC(n);
}

void *gc_alloc_root(size_t n) { return GC_MALLOC_UNCOLLECTABLE(n); }

/* A suspended coroutine's frames keep their redzones poisoned; if the coroutine is dropped,
 * the block is collected with them, and the next allocation that reuses the memory (Boehm's
 * own memset included) is reported as a stack-buffer-underflow. A finalizer (ASan builds
 * only) clears them before the block is freed. */
#ifdef GC_ASAN
#include <sanitizer/asan_interface.h>
static void GC_CALLBACK stack_block_freed(void *p, void *n) { __asan_unpoison_memory_region(p, (size_t)n); }
void gc_stack_block(void *p, size_t n) { GC_REGISTER_FINALIZER_NO_ORDER(p, stack_block_freed, (void *)n, NULL, NULL); }
#else
void gc_stack_block(void *p, size_t n) { (void)p, (void)n; }
#endif

void *gc_realloc(void *p, size_t n) {
    INJECT(n)
    before_alloc(n);
    return GC_REALLOC(p, n);
}

static int weak_kind = -1;

/* A weak block stays registered (weak_blocks) until a collection finds it unmarked: freeing
 * it early would let the registry name whatever reuses the memory. */
void gc_free(void *p) {
    if (GC_get_kind_and_size(p, NULL) == weak_kind) return;
    GC_FREE(p);
}

/* What the heap held after the last collection (whole free blocks aside, so it counts the
 * free lists' contents too), plus what was allocated since and not freed explicitly: it
 * grows with every allocation, as lua5.4's count does, not block by block. */
size_t gc_heap_used(void) {
    size_t since = GC_get_bytes_since_gc(), freed = GC_get_expl_freed_bytes_since_gc();
    size_t used = atomic_load_explicit(&used_at_gc, memory_order_relaxed) + since;
    return used > freed ? used - freed : 0;
}

size_t gc_heap_live(void) { return atomic_load_explicit(&used_at_gc, memory_order_relaxed); }

void gc_set_stress(unsigned every) { atomic_store_explicit(&stress_every, every, memory_order_relaxed); }

void gc_set_max_heap(size_t bytes) { GC_set_max_heap_size((GC_word)bytes); }

uint64_t gc_count(void) { return (uint64_t)GC_get_gc_no(); }

/* ---- threads ------------------------------------------------------------------------- */

typedef struct Start {
    gc_thread_fn fn;
    void *arg;
} Start;

static void *thread_main(void *p) {
    Start st = *(Start *)p;
    free(p);
    register_self();
    void *r = st.fn(st.arg);
    gate_exit_begin(); /* TSan builds: no collection from here until Boehm has let go of it */
    GcStack *s = self;
    self = NULL;
    gc_stack_unlink(s);
    GC_FREE(s);
    return r;
}

int gc_thread_start(gc_thread_fn fn, void *arg, size_t stack_bytes) {
    Start *st = malloc(sizeof *st);
    if (st == NULL) return 12; /* ENOMEM */
    st->fn = fn;
    st->arg = arg;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (stack_bytes) pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t t;
    int rc = pthread_create(&t, &attr, thread_main, st); /* GC_pthread_create: registered */
    pthread_attr_destroy(&attr);
    if (rc != 0) free(st);
    return rc;
}

#ifdef GC_TSAN
/* See "the allocator-lock gate" above. */
typedef struct Blocking {
    gc_thread_fn fn;
    void *arg;
} Blocking;

static void *GC_CALLBACK blocking_body(void *p) {
    Blocking *b = p;
    gate_release(); /* marked blocked now: a collection no longer signals this thread */
    return b->fn(b->arg);
}

void *gc_do_blocking(gc_thread_fn fn, void *arg) {
    if (!gate_hold(false)) return fn(arg);
    Blocking b = {fn, arg};
    return GC_do_blocking(blocking_body, &b);
}
#else
void *gc_do_blocking(gc_thread_fn fn, void *arg) { return GC_do_blocking(fn, arg); }
#endif

void gc_set_stack(void *hi) {
    struct GC_stack_base sb = {.mem_base = hi};
    /* GC_set_stackbottom asks for the allocator lock only against a concurrent collection,
     * which cannot happen while this thread runs (see the top comment); with the handle it
     * looks nothing up. Taking the lock would serialise every carrier's switches. */
    GC_set_stackbottom(self_handle, &sb);
}

/* ---- weak blocks, the post-mark hook, finalization ------------------------------------
 * See gc_api.h and gc/README.md ("Weak references and finalization").
 *
 * Where things live, and why:
 *   - weak blocks: a Boehm kind of their own (weak_kind) whose descriptor is a mark
 *     procedure, so Boehm never scans their words conservatively; the procedure hands the
 *     block to the VM's trace hook. Every weak block is listed in weak_blocks by a hidden
 *     pointer (GC_HIDE_POINTER: the list itself must not keep blocks alive), in malloc'd
 *     memory that no collection scans.
 *   - finalization: fin_reg lists registered objects by hidden pointers, in registration
 *     order; fin_rq is the queue of ready objects by plain pointers, in malloc'd memory that
 *     push_ready offers to every collection as a root range.
 *   - the own marker's work list is mmap'ed: the hooks run inside a collection, where
 *     neither Boehm's allocator (its lock is held) nor malloc (a thread stopped by a signal,
 *     in an ffi call, may hold malloc's lock) may be used.
 * Both lists are changed under fin_lock / weak_lock by running threads, never across an
 * allocation from this heap or a safepoint, and read and compacted by the hooks while the
 * world is stopped without the locks (no stopped thread can hold them). */

static GcHooks hooks;
static pthread_mutex_t weak_lock = PTHREAD_MUTEX_INITIALIZER;
static GC_word *weak_blocks; /* hidden pointers */
static size_t nweak, capweak;

struct GcMarker {
    bool own;                       /* after-mark hook: own marker; else Boehm's mark stack */
    struct GC_ms_entry *msp, *lim;  /* Boehm's mark stack, inside the mark procedure */
    uint64_t marked;                /* objects marked by the own marker */
};

void gc_set_hooks(const GcHooks *h) { hooks = *h; }

/* Boehm's mark procedure for weak blocks. */
static struct GC_ms_entry *weak_mark_proc(GC_word *addr, struct GC_ms_entry *msp, struct GC_ms_entry *lim,
                                          GC_word env) {
    (void)env;
    GcMarker m = {false, msp, lim, 0};
    if (hooks.trace) hooks.trace(addr, GC_size(addr), &m);
    return m.msp;
}

/* Boehm's kind of GC_MALLOC_ATOMIC blocks (gc.h of 8.2 does not name it). */
static int ptrfree_kind = -1;

static void init_weak_kind(void) {
    weak_kind = (int)GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(GC_new_proc(weak_mark_proc), 0), 0, 1);
    void *probe = GC_MALLOC_ATOMIC(16);
    if (probe == NULL) abort();
    ptrfree_kind = GC_get_kind_and_size(probe, NULL);
    GC_FREE(probe);
}

void *gc_alloc_weak(size_t n) {
    INJECT(n)
    before_alloc(n);
    void *p = GC_generic_malloc(n, weak_kind);
    if (p == NULL) return NULL;
    pthread_mutex_lock(&weak_lock);
    if (nweak == capweak) {
        size_t cap = capweak ? 2 * capweak : 64;
        GC_word *w = realloc(weak_blocks, cap * sizeof *w);
        if (w == NULL) {
            pthread_mutex_unlock(&weak_lock);
            return NULL; /* the block is garbage: nothing refers to it */
        }
        weak_blocks = w;
        capweak = cap;
    }
    weak_blocks[nweak++] = GC_HIDE_POINTER(p);
    pthread_mutex_unlock(&weak_lock);
    return p;
}

/* ---- the own marker (after-mark hook only) -------------------------------------------- */

static void **work;          /* objects marked, not yet scanned */
static size_t nwork, capwork;

/* Grow the work list with mmap/mremap: no allocator may be used here (see above). Out of
 * address space, nothing can be done that keeps the heap consistent. */
static void work_push(void *p) {
    if (nwork == capwork) {
        size_t cap = capwork ? 2 * capwork : 65536;
        void *w = capwork ? mremap(work, capwork * sizeof *work, cap * sizeof *work, MREMAP_MAYMOVE)
                          : mmap(NULL, cap * sizeof *work, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (w == MAP_FAILED) {
            fputs("tandem: out of memory while marking weak tables\n", stderr);
            abort();
        }
        work = w;
        capwork = cap;
    }
    work[nwork++] = p;
}

static inline void *heap_base(const void *p) {
    if ((GC_word)p < (GC_word)GC_least_plausible_heap_addr || (GC_word)p > (GC_word)GC_greatest_plausible_heap_addr)
        return NULL;
    return GC_base((void *)p);
}

void gc_mark_slot(GcMarker *m, void *const *slot) {
    void *p = *slot;
    if (!m->own) {
        m->msp = GC_MARK_AND_PUSH(p, m->msp, m->lim, (void **)slot);
        return;
    }
    void *b = heap_base(p);
    if (b == NULL || GC_is_marked(b)) return;
    GC_set_mark_bit(b);
    m->marked++;
    work_push(b);
}

bool gc_is_marked(const void *p) {
    void *b = heap_base(p);
    return b == NULL || GC_is_marked(b);
}

uint64_t gc_marked_count(const GcMarker *m) { return m->marked; }

/* Scan what the own marker marked, as Boehm would: pointer-free objects not at all, weak
 * blocks through the trace hook, everything else conservatively, word by word over the
 * whole block (Boehm's descriptor for its plain kinds is the block's length). */
static void drain(GcMarker *m) {
    while (nwork > 0) {
        void *b = work[--nwork];
        size_t sz = 0;
        int k = GC_get_kind_and_size(b, &sz);
        if (k == ptrfree_kind) continue;
        if (k == weak_kind) {
            if (hooks.trace) hooks.trace(b, sz, m);
            continue;
        }
        for (void *const *w = b; (const char *)(w + 1) <= (const char *)b + sz; w++) gc_mark_slot(m, w);
    }
}

void gc_weak_each(GcMarker *m, void (*fn)(void *b, size_t bytes, GcMarker *m, void *arg), void *arg) {
    for (size_t i = 0; i < nweak; i++) {
        void *b = GC_REVEAL_POINTER(weak_blocks[i]);
        if (!GC_is_marked(b)) continue;
        fn(b, GC_size(b), m, arg);
        drain(m);
    }
}

/* Forget the weak blocks that this collection frees. */
static void weak_prune(void) {
    size_t j = 0;
    for (size_t i = 0; i < nweak; i++)
        if (GC_is_marked(GC_REVEAL_POINTER(weak_blocks[i]))) weak_blocks[j++] = weak_blocks[i];
    nweak = j;
}

/* ---- finalization ---------------------------------------------------------------------- */

static pthread_mutex_t fin_lock = PTHREAD_MUTEX_INITIALIZER;
static GC_word *fin_reg; /* hidden pointers, oldest first */
static size_t nreg, capreg;
/* Ready queue: fin_rq[rq_head .. rq_tail) are plain pointers (roots). Invariant, kept by
 * gc_fin_register: rq_cap - rq_tail >= nreg, so separation never needs to allocate. */
static void **fin_rq;
static size_t rq_head, rq_tail, rq_cap;
static atomic_size_t fin_ready; /* rq_tail - rq_head, for gc_fin_pending */

static void push_ready(void) {
    if (rq_tail > rq_head) GC_push_all_eager(fin_rq + rq_head, fin_rq + rq_tail);
}

static void fin_oom(void) {
    fputs("tandem: out of memory registering a finalizer\n", stderr);
    abort();
}

void gc_fin_register(void *obj) {
    pthread_mutex_lock(&fin_lock);
    if (nreg == capreg) {
        size_t cap = capreg ? 2 * capreg : 64;
        GC_word *r = realloc(fin_reg, cap * sizeof *r);
        if (r == NULL) fin_oom();
        fin_reg = r;
        capreg = cap;
    }
    fin_reg[nreg++] = GC_HIDE_POINTER(obj);
    if (rq_cap - rq_tail < nreg) {
        /* move the queue to the front, then grow it if that is not enough */
        size_t n = rq_tail - rq_head;
        if (n > 0 && rq_head > 0) memmove(fin_rq, fin_rq + rq_head, n * sizeof *fin_rq);
        rq_head = 0;
        rq_tail = n;
        if (rq_cap - rq_tail < nreg) {
            size_t cap = rq_cap ? 2 * rq_cap : 64;
            while (cap - rq_tail < nreg) cap *= 2;
            void **q = realloc(fin_rq, cap * sizeof *q);
            if (q == NULL) fin_oom();
            fin_rq = q;
            rq_cap = cap;
        }
    }
    pthread_mutex_unlock(&fin_lock);
}

/* Move registered objects to the ready queue, newest first: all of them, or those the
 * collection has not marked. Returns the index in fin_rq of the first one moved. */
static size_t separate(bool all) {
    size_t first = rq_tail, j = nreg;
    for (size_t i = nreg; i-- > 0;) {
        void *p = GC_REVEAL_POINTER(fin_reg[i]);
        if (all || !GC_is_marked(p)) {
            fin_rq[rq_tail++] = p;
        } else {
            fin_reg[--j] = fin_reg[i]; /* kept, order preserved, packed towards the end */
        }
    }
    size_t kept = nreg - j;
    if (kept) memmove(fin_reg, fin_reg + j, kept * sizeof *fin_reg); /* none registered yet: fin_reg is NULL */
    nreg = kept;
    atomic_store_explicit(&fin_ready, rq_tail - rq_head, memory_order_release);
    return first;
}

size_t gc_fin_separate(GcMarker *m) {
    size_t first = separate(false);
    for (size_t i = first; i < rq_tail; i++) gc_mark_slot(m, &fin_rq[i]);
    drain(m);
    return rq_tail - first;
}

void gc_fin_all(void) {
    pthread_mutex_lock(&fin_lock);
    separate(true);
    pthread_mutex_unlock(&fin_lock);
}

void *gc_fin_next(void) {
    void *p = NULL;
    pthread_mutex_lock(&fin_lock);
    if (rq_head < rq_tail) {
        p = fin_rq[rq_head];
        fin_rq[rq_head++] = NULL;
        if (rq_head == rq_tail) rq_head = rq_tail = 0;
        atomic_store_explicit(&fin_ready, rq_tail - rq_head, memory_order_release);
    }
    pthread_mutex_unlock(&fin_lock);
    return p;
}

bool gc_fin_pending(void) { return atomic_load_explicit(&fin_ready, memory_order_relaxed) != 0; }

/* GC_EVENT_MARK_END: marking is complete, the world is stopped, nothing is freed yet. */
static void after_mark(void) {
    if (hooks.after_mark == NULL) return;
    GcMarker m = {true, NULL, NULL, 0};
    hooks.after_mark(&m);
    drain(&m);
    weak_prune();
}
