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

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Runs in the collecting thread with the world stopped and the allocator lock held (so no
 * link or unlink is under way): must not allocate or lock. */
static void GC_CALLBACK push_dormant_stacks(void) {
    for (GcStack *s = stacks.next; s != &stacks; s = s->next) {
        void **spp = s->spp;
        if (spp != NULL && *spp != NULL) GC_push_all_eager(*spp, s->hi);
    }
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
    if (t < (256u << 10)) t = 256u << 10;
    atomic_store_explicit(&trigger_bytes, t, memory_order_relaxed);
    atomic_store_explicit(&free_at_gc, (size_t)free_bytes, memory_order_relaxed);
    atomic_store_explicit(&heap_at_gc, (size_t)heap, memory_order_relaxed);
}

/* Boehm's progress callback, with its allocation lock held (so the unsynchronised statistics
 * are consistent): what a finished collection left in use, for gc_heap_used. Whoever
 * started the collection (our trigger, Boehm's own, an explicit one), it ends here. */
static void GC_CALLBACK on_collection_event(GC_EventType ev) {
    if (ev != GC_EVENT_END) return;
    struct GC_prof_stats_s st;
    GC_get_prof_stats_unsafe(&st, sizeof st);
    atomic_store_explicit(&used_at_gc, (size_t)(st.heapsize_full - st.free_bytes_full), memory_order_relaxed);
}

#if defined(GC_ASAN) || defined(GC_TSAN)
/* The sanitizer runtime's own data (libtsan: 50 MB of .bss, libasan: 5.6 MB) holds no pointer
 * into the GC heap, yet Boehm scanned it as a root in every collection: 48 ms each under
 * TSan, so the stressed tests (-Xgc.stress, unit_gc_test_gc_boehm) ran for hours. gcc links
 * the runtime as a shared library, known by its name (clang links it into the program). */
static int GC_CALLBACK not_sanitizer_data(const char *name, void *start, size_t size) {
    (void)start, (void)size;
    return strstr(name, "/libasan.so") == NULL && strstr(name, "/libtsan.so") == NULL &&
           strstr(name, "/libubsan.so") == NULL;
}
#endif

void gc_init(void) {
    static bool started;
    if (started) return;
    started = true;
    /* One marker: on a 2-core machine the second core belongs to the analyzer. */
    if (getenv("GC_MARKERS") == NULL) GC_set_markers_count(1);
#if defined(GC_ASAN) || defined(GC_TSAN)
    GC_register_has_static_roots_callback(not_sanitizer_data);
#endif
    GC_INIT();
    const char *d = getenv("GC_FREE_SPACE_DIVISOR");
    if (d != NULL && atoi(d) > 0) free_space_divisor = (unsigned)atoi(d);
    GC_set_free_space_divisor(free_space_divisor);
    GC_set_warn_proc(warn);
    GC_set_on_collection_event(on_collection_event);
    GC_allow_register_threads();
    prev_push = GC_get_push_other_roots();
    GC_set_push_other_roots(push_dormant_stacks);
    register_self();
    set_trigger();
}

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
 *     blocked, and its callers have already left the VM (vm_ctx_block, or a safepoint
 *     waiting for an operation to end, with the safepoint lock held: it must not wait
 *     here). gc_do_blocking holds the gate until the region's function starts (the thread
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

void gc_free(void *p) { GC_FREE(p); }

/* What the heap held after the last collection (whole free blocks aside, so it counts the
 * free lists' contents too), plus what was allocated since and not freed explicitly: it
 * grows with every allocation, as lua5.4's count does, not block by block. */
size_t gc_heap_used(void) {
    size_t since = GC_get_bytes_since_gc(), freed = GC_get_expl_freed_bytes_since_gc();
    size_t used = atomic_load_explicit(&used_at_gc, memory_order_relaxed) + since;
    return used > freed ? used - freed : 0;
}

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
