/* cab_topology.c: the machine's cache topology through hwloc, read once: L1d size (for the
 * default chunk), a partner CPU that shares a cache (for pairing a program thread with its
 * analyzer), thread binding. hwloc_topology_load takes ~10 ms: it runs on first use only,
 * under pthread_once; the topology is then read-only and shared by all threads. */
#include "cab_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static hwloc_topology_t topo; /* NULL if hwloc failed; never freed (process lifetime) */
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

static void topo_load(void) {
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) return;
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return;
    }
    topo = t;
}

static hwloc_topology_t get_topo(void) {
    pthread_once(&topo_once, topo_load);
    return topo;
}

/* An empty program with every plugin: 11.3 M instructions and 8.3 MB peak RSS; without
 * them 3.1 M and 5.1 MB (callgrind; /usr/bin/time, 2026-11-27). hwloc loads its plugins at
 * the first hwloc_topology_init, reading this variable then. */
#define CORE_ONLY_PLUGINS_BLACKLIST "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml"

void cab_topology_load_core(void) {
    bool set = getenv("HWLOC_PLUGINS_BLACKLIST") == NULL;
    if (set) setenv("HWLOC_PLUGINS_BLACKLIST", CORE_ONLY_PLUGINS_BLACKLIST, 1);
    get_topo();
    if (set) unsetenv("HWLOC_PLUGINS_BLACKLIST");
}

size_t cab_topology_l1d_bytes(void) {
    hwloc_topology_t t = get_topo();
    if (!t) return 0;
    /* HWLOC_OBJ_L1CACHE is the level-1 data (or unified) cache; L1i is a separate type. */
    hwloc_obj_t l1 = hwloc_get_obj_by_type(t, HWLOC_OBJ_L1CACHE, 0);
    return l1 && l1->attr ? (size_t)l1->attr->cache.size : 0;
}

size_t cab_topology_default_chunk(void) {
    size_t l1 = cab_topology_l1d_bytes();
    if (l1 == 0) return CAB_FALLBACK_CHUNK_BYTES;
    size_t want = 4 * l1, c = CAB_MIN_CHUNK_BYTES; /* paper 3.1.3: four times the L1 */
    while (c * 2 <= want) c *= 2;
    return c;
}

/* First PU under [set] other than [cpu]; with [other_core], also not on [cpu]'s core. */
static int pick_in(hwloc_topology_t t, hwloc_const_cpuset_t set, hwloc_obj_t pu, bool other_core) {
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_inside_cpuset_by_type(t, set, HWLOC_OBJ_PU, o)) != NULL) {
        if (o->os_index == pu->os_index) continue;
        if (other_core && core && hwloc_bitmap_isset(core->cpuset, o->os_index)) continue;
        return (int)o->os_index;
    }
    return -1;
}

int cab_topology_pick_partner(int cpu) {
    hwloc_topology_t t = get_topo();
    if (!t || cpu < 0) return -1;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t, (unsigned)cpu);
    if (!pu) return -1;
    /* Smallest cache shared with another core first (the paper pairs the two threads on
     * distinct cores under a common cache), then an SMT sibling, then anything. */
    for (int pass = 0; pass < 2; pass++)
        for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
            if (!hwloc_obj_type_is_cache(o->type) || hwloc_bitmap_weight(o->cpuset) < 2) continue;
            int c = pick_in(t, o->cpuset, pu, pass == 0);
            if (c >= 0) return c;
        }
    return pick_in(t, hwloc_topology_get_topology_cpuset(t), pu, false);
}

int cab_topology_bind_self(int cpu) {
    hwloc_topology_t t = get_topo();
    if (!t) return ENOSYS;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) return ENOMEM;
    hwloc_bitmap_only(set, (unsigned)cpu);
    int rc = hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD) == 0 ? 0 : (errno ? errno : EINVAL);
    hwloc_bitmap_free(set);
    return rc;
}

int cab_topology_current_cpu(void) { return sched_getcpu(); }

void cab_topology_plan(int nanalyzers, CabPlacement *p) {
    memset(p, 0, sizeof *p);
    hwloc_topology_t t = get_topo();
    if (!t) return;
    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    if (ncores <= 0) return;
    p->ncores = ncores;
    if (ncores > CAB_MAX_PLACED) ncores = CAB_MAX_PLACED;
    int nan = nanalyzers < ncores - 1 ? nanalyzers : ncores - 1;
    if (nan <= 0) return;
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)i);
        hwloc_obj_t pu = core ? hwloc_get_next_obj_inside_cpuset_by_type(t, core->cpuset, HWLOC_OBJ_PU, NULL) : NULL;
        if (!pu) continue;
        if (i >= ncores - nan)
            p->analyzer_cpus[p->nanalyzers++] = (int)pu->os_index;
        else
            p->app_cpus[p->napp++] = (int)pu->os_index;
    }
}

int cab_topology_bind_self_set(const int *cpus, int n) {
    hwloc_topology_t t = get_topo();
    if (!t) return ENOSYS;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) return ENOMEM;
    for (int i = 0; i < n; i++) hwloc_bitmap_set(set, (unsigned)cpus[i]);
    int rc = hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD) == 0 ? 0 : (errno ? errno : EINVAL);
    hwloc_bitmap_free(set);
    return rc;
}

const char *cab_topology_shared_cache(int a, int b) {
    static const char *names[] = {"L1", "L2", "L3", "L4", "L5"};
    hwloc_topology_t t = get_topo();
    if (!t || a < 0 || b < 0) return "no cache";
    hwloc_obj_t pa = hwloc_get_pu_obj_by_os_index(t, (unsigned)a);
    if (!pa) return "no cache";
    for (hwloc_obj_t o = pa->parent; o; o = o->parent)
        if (hwloc_obj_type_is_cache(o->type) && hwloc_bitmap_isset(o->cpuset, (unsigned)b)) {
            unsigned d = o->attr ? o->attr->cache.depth : 0;
            return d >= 1 && d <= 5 ? names[d - 1] : "a cache";
        }
    return "no cache";
}

size_t cab_topology_describe(char *buf, size_t n) {
    hwloc_topology_t t = get_topo();
    if (!t) return (size_t)snprintf(buf, n, "topology: unknown (hwloc failed)");
    size_t len = 0;
#define PUT(...) len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, __VA_ARGS__)
    PUT("topology: %d package(s), %d core(s), %d PU(s)", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
        hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
    static const hwloc_obj_type_t caches[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
    static const char *names[] = {"L1d", "L2", "L3"};
    for (int c = 0; c < 3; c++) {
        int cnt = hwloc_get_nbobjs_by_type(t, caches[c]);
        if (cnt <= 0) continue;
        hwloc_obj_t o = hwloc_get_obj_by_type(t, caches[c], 0);
        unsigned long kb = o->attr ? (unsigned long)(o->attr->cache.size / 1024) : 0;
        int cores = hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_CORE);
        PUT("; %s %lu KB x %d (%d core(s) each)", names[c], kb, cnt, cores);
    }
#undef PUT
    return len;
}

/* ---- Is a core idle? (CAB_FULL_ADAPTIVE) ----
 *
 * The fourth field of /proc/loadavg, "R/T", counts the runnable threads of the whole system
 * at the moment of the read (not an average), the reader included. Fewer than the online
 * CPUs: a CPU is idle (or about to be), so a runnable analyzer has one. It sees other
 * processes too, which is the point on a shared machine. Read on a full ring's slow path
 * only (a few microseconds: open, read, close). Without /proc the answer is "idle", which
 * makes adaptive behave as block. */
int cab_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

bool cab_idle_core(int ncpus) {
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return true;
    buf[n] = 0;
    double a1, a5, a15;
    int running, total;
    if (sscanf(buf, "%lf %lf %lf %d/%d", &a1, &a5, &a15, &running, &total) != 5) return true;
    return running < ncpus;
}
