/* test_pathprof.c: Ball-Larus numbering (vm_pathprof.c) on bytecode built by hand: random
 * control-flow graphs (tests with their JMPs, plain JMPs, returns, dead code, a test whose
 * JMP is itself a jump target) walked at random the way the interpreter runs them, applying
 * the per-instruction actions. Every emitted number must decode to exactly the blocks the
 * walk went through since the previous one (blocks found here independently: leaders in
 * code order), with the right start and end; every number in [0, NumPaths) must decode to
 * a distinct path; and with a low path limit (the fallback's cut edges) the same holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vm_opcodes.h"
#include "vm_pathprof.h"

static uint32_t next_fid = 1;
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static bool is_test(unsigned op) { return (op >= OP_EQ && op <= OP_GEI) || op == OP_TEST || op == OP_TESTSET; }

static Instr jmp_to(int from, int to) { return vm_encode_asbx(OP_JMP, 0, to - (from + 1)); }

/* A random function of [n] instructions (n >= 4): LOADI, test + JMP pairs, JMPs and
 * returns, ending in RETURN0. Jumps go mostly forward; with [loops], one in eight anywhere
 * (also, now and then, onto the JMP of a test). */
static Instr *random_code(int n, bool loops, int *np) {
    Instr *c = calloc((size_t)n, sizeof *c);
    bool *second = calloc((size_t)n, sizeof *second);
    for (int pc = 0; pc < n - 1;) {
        unsigned k = rnd(10);
        if (k < 5 && pc + 2 < n - 1) {
            c[pc] = vm_encode_abc(OP_EQ, 0, 1, 0, rnd(2));
            second[pc + 1] = true;
            c[pc + 1] = 0; /* target filled below */
            pc += 2;
        } else if (k < 6) {
            c[pc++] = vm_encode_asbx(OP_JMP, 0, 0); /* target below */
        } else if (k < 7 && rnd(loops ? 3 : 40) == 0) {
            c[pc++] = vm_encode_abc(OP_RETURN0, 0, 0, 0, 0);
        } else {
            c[pc++] = vm_encode_asbx(OP_LOADI, 0, 1);
        }
    }
    c[n - 1] = vm_encode_abc(OP_RETURN0, 0, 0, 0, 0);
    for (int pc = 0; pc < n - 1; pc++) {
        bool pairjmp = second[pc];
        if (!pairjmp && vm_op(c[pc]) != OP_JMP) continue;
        if (pairjmp || vm_op(c[pc]) == OP_JMP) {
            int t;
            do /* mostly forward (many paths), sometimes anywhere (loops) */
                t = (loops && rnd(8) == 0) || pc + 2 >= n ? (int)rnd((uint32_t)n)
                    : pc + 2 + (int)rnd((uint32_t)(n - pc - 2 < 12 ? n - pc - 2 : 12)); /* near: long paths */
            while (second[t] && rnd(8) != 0); /* now and then: a jump onto a test's JMP */
            c[pc] = jmp_to(pc, t);
        }
    }
    free(second);
    *np = n;
    return c;
}

/* Leaders, found here without vm_pathprof.c. */
static void leaders(const Instr *c, int n, int *blockof, bool *lead) {
    memset(lead, 0, (size_t)(n + 1) * sizeof *lead);
    lead[0] = true;
    for (int pc = 0; pc < n; pc++) {
        unsigned op = vm_op(c[pc]);
        if (is_test(op)) lead[pc + 2] = true;
        if (op == OP_JMP) {
            lead[pc + 1 + vm_sbx(c[pc])] = true;
            lead[pc + 1] = true;
        }
        if (op == OP_RETURN0) lead[pc + 1] = true;
    }
    for (int pc = 0, b = -1; pc < n; pc++) {
        if (lead[pc]) b++;
        blockof[pc] = b;
    }
}

typedef struct Walk {
    const Instr *code;
    int n;
    uint32_t fid;
    uintptr_t bias;
    int *blockof;
    bool *lead;
    uint32_t r;
    uint32_t seq[4096];
    int nseq;
    int startloop;
    long paths, cuts;
} Walk;

/* A path was emitted: it must decode to the blocks walked. */
static void check_path(Walk *w, uint32_t number, unsigned endflag) {
    uint32_t blocks[4096], lines[8192];
    ProfPath p = {blocks, 4096, lines, 8192, 0, 0, 0};
    assert_int_equal(vm_pathprof_decode(w->fid, number, &p, NULL), 0);
    assert_int_equal(p.nblocks, w->nseq);
    for (int i = 0; i < w->nseq; i++) assert_int_equal(blocks[i], w->seq[i]);
    assert_int_equal(p.flags & PROF_PATH_START_LOOP, w->startloop ? PROF_PATH_START_LOOP : 0);
    assert_int_equal(p.flags & (PROF_PATH_END_BACK | PROF_PATH_END_CUT), endflag);
    w->paths++;
}

/* Control reaches [pc] from block [from] (or from the entry, from < 0). */
static void arrive(Walk *w, int pc) {
    if (!w->lead[pc]) return;
    uint32_t y = (uint32_t)w->blockof[pc];
    if (w->nseq < 4096) w->seq[w->nseq++] = y;
}

/* Applies the action of outcome [o] at [pc], leading to [to]. */
static void act(Walk *w, int pc, unsigned o, int to) {
    uint64_t a = vm_pathprof_act(w->bias, &w->code[pc], o);
    bool back = w->blockof[to] <= w->blockof[pc] && w->lead[to];
    if (vm_pathact_reset(a) == VM_PATH_NORESET) {
        assert_false(back); /* every back edge ends a path */
        w->r += vm_pathact_inc(a);
        return;
    }
    /* a back edge, or a forward edge the fallback cut */
    if (!back) {
        assert_true(w->lead[to]);
        w->cuts++;
    }
    check_path(w, w->r + vm_pathact_inc(a), back ? PROF_PATH_END_BACK : PROF_PATH_END_CUT);
    w->r = vm_pathact_reset(a);
    w->nseq = 0;
    w->startloop = 1;
}

static void walk_once(Walk *w) {
    int pc = 0;
    w->r = 0;
    w->nseq = 0;
    w->startloop = 0;
    arrive(w, 0);
    for (int steps = 0; steps < 2000; steps++) {
        Instr i = w->code[pc];
        unsigned op = vm_op(i);
        if (op == OP_RETURN0) {
            check_path(w, w->r, 0);
            return;
        }
        if (is_test(op)) {
            unsigned o = rnd(2);
            if (o == 0) {
                act(w, pc, 0, pc + 2);
                pc += 2;
            } else {
                int t = pc + 2 + vm_sbx(w->code[pc + 1]);
                /* the interpreter takes the JMP in the same step; a walker sees its block */
                uint64_t a = vm_pathprof_act(w->bias, &w->code[pc], 1);
                if (w->lead[pc + 1]) {
                    /* composed action: into the JMP's block, then along its edge */
                    bool back = w->blockof[t] <= w->blockof[pc + 1] && w->lead[t];
                    arrive(w, pc + 1);
                    if (vm_pathact_reset(a) == VM_PATH_NORESET) {
                        assert_false(back);
                        w->r += vm_pathact_inc(a);
                    } else {
                        if (!back) w->cuts++;
                        check_path(w, w->r + vm_pathact_inc(a), back ? PROF_PATH_END_BACK : PROF_PATH_END_CUT);
                        w->r = vm_pathact_reset(a);
                        w->nseq = 0;
                        w->startloop = 1;
                    }
                } else {
                    act(w, pc, 1, t);
                }
                pc = t;
            }
            arrive(w, pc);
            continue;
        }
        if (op == OP_JMP) {
            int t = pc + 1 + vm_sbx(i);
            act(w, pc, 1, t);
            pc = t;
            arrive(w, pc);
            continue;
        }
        pc++;
        arrive(w, pc);
    }
    /* gave up in a loop: the unfinished path is dropped, as on an error */
}

/* Every number decodes, to distinct paths. */
static void check_all_numbers(uint32_t fid) {
    uint32_t blocks[4096], lines[8192];
    static char seen[1 << 10][256];
    int nseen = 0;
    for (uint32_t k = 0;; k++) {
        ProfPath p = {blocks, 4096, lines, 8192, 0, 0, 0};
        if (vm_pathprof_decode(fid, k, &p, NULL) != 0) break;
        if (k >= 1u << 10) return; /* many: sampled by the walks only */
        char key[256];
        int len = snprintf(key, sizeof key, "%u:", p.flags);
        for (int b = 0; b < p.nblocks; b++) len += snprintf(key + len, sizeof key - (size_t)len, "%u,", blocks[b]);
        assert_true(len < (int)sizeof key - 1);
        for (int j = 0; j < nseen; j++) assert_string_not_equal(seen[j], key);
        memcpy(seen[nseen++], key, sizeof key);
    }
}

static void run_random(int nfuncs, int size, bool loops) {
    long paths = 0, cuts = 0;
    for (int f = 0; f < nfuncs; f++) {
        int n;
        Instr *code = random_code(size, loops, &n);
        Proto p;
        memset(&p, 0, sizeof p);
        p.code = code;
        p.ncode = n;
        Walk *w = calloc(1, sizeof *w);
        w->code = code;
        w->n = n;
        w->fid = next_fid++;
        w->bias = vm_pathprof_build(&p, w->fid);
        assert_true(w->bias != VM_PATH_OFF);
        w->blockof = calloc((size_t)n, sizeof *w->blockof);
        w->lead = calloc((size_t)n + 1, sizeof *w->lead);
        leaders(code, n, w->blockof, w->lead);
        for (int k = 0; k < 200; k++) walk_once(w);
        if (size <= 40) check_all_numbers(w->fid);
        paths += w->paths;
        cuts += w->cuts;
        free(w->blockof);
        free(w->lead);
        free(w);
        /* code stays allocated: the numbering refers to it for the rest of the process */
    }
    print_message("%d functions of %d instructions: %ld paths checked, %ld cut edges taken\n", nfuncs, size, paths,
                  cuts);
}

static void test_random_small(void **state) {
    (void)state;
    run_random(300, 24, true);
}

static void test_random_large(void **state) {
    (void)state;
    run_random(30, 400, true);
    run_random(30, 400, false); /* no loops: far more than 2^32 paths, cut */
}

static void test_random_low_limit(void **state) {
    (void)state;
    vm_pathprof_configure(&(VmPathprofOptions){200, NULL});
    run_random(200, 40, true);
    vm_pathprof_configure(&(VmPathprofOptions){0, NULL}); /* the default */
}

/* The loop of paths_pattern.lua, by hand: numbers 3, 5, 6, 8 (tests/profile/run_analysis_tests.py). */
static void test_pattern_numbers(void **state) {
    (void)state;
    static Instr code[17];
    code[0] = vm_encode_asbx(OP_LOADI, 1, 0);
    code[1] = vm_encode_asbx(OP_LOADI, 2, 0);
    code[2] = vm_encode_asbx(OP_LOADI, 3, 1);
    code[3] = vm_encode_abc(OP_MOVE, 4, 0, 0, 0);
    code[4] = vm_encode_asbx(OP_LOADI, 5, 1);
    code[5] = vm_encode_asbx(OP_FORPREP, 3, 7);
    code[6] = vm_encode_abc(OP_MODK, 7, 6, 0, 0);
    code[7] = vm_encode_abc(OP_EQI, 7, 0, 0, 0);
    code[8] = vm_encode_asbx(OP_JMP, 0, 2);
    code[9] = vm_encode_abc(OP_ADDI, 1, 1, 1, 0);
    code[10] = vm_encode_asbx(OP_JMP, 0, 1);
    code[11] = vm_encode_abc(OP_ADDI, 2, 2, 1, 0);
    code[12] = vm_encode_asbx(OP_FORLOOP, 3, -7);
    code[13] = vm_encode_abc(OP_MULK, 3, 1, 1, 0);
    code[14] = vm_encode_abc(OP_ADD, 3, 3, 2, 0);
    code[15] = vm_encode_abc(OP_RETURN1, 3, 0, 0, 0);
    code[16] = vm_encode_abc(OP_RETURN0, 0, 0, 0, 0);
    Proto p;
    memset(&p, 0, sizeof p);
    p.code = code;
    p.ncode = 17;
    uint32_t fid = next_fid++;
    uintptr_t bias = vm_pathprof_build(&p, fid);
    assert_true(bias != VM_PATH_OFF);
    /* FORPREP falls into the body: +0; EQI not taken (then): +0, taken (else): +2; FORLOOP
     * back: emit r + 1, restart at 5; falls out: +0 */
    assert_int_equal(vm_pathprof_act(bias, &code[5], 0), (uint64_t)VM_PATH_NORESET << 32);
    assert_int_equal(vm_pathprof_act(bias, &code[5], 1), (uint64_t)VM_PATH_NORESET << 32 | 4);
    assert_int_equal(vm_pathprof_act(bias, &code[7], 0), (uint64_t)VM_PATH_NORESET << 32);
    assert_int_equal(vm_pathprof_act(bias, &code[7], 1), (uint64_t)VM_PATH_NORESET << 32 | 2);
    assert_int_equal(vm_pathprof_act(bias, &code[12], 1), (uint64_t)5 << 32 | 1);
    assert_int_equal(vm_pathprof_act(bias, &code[12], 0), (uint64_t)VM_PATH_NORESET << 32);
    uint32_t blocks[16], lines[16];
    ProfPath d = {blocks, 16, lines, 16, 0, 0, 0};
    assert_int_equal(vm_pathprof_decode(fid, 8, &d, NULL), 0);
    assert_int_equal(d.nblocks, 3);
    assert_int_equal(blocks[0], 1);
    assert_int_equal(blocks[1], 3);
    assert_int_equal(blocks[2], 4);
    assert_int_equal(d.flags, PROF_PATH_START_LOOP | PROF_PATH_END_BACK);
    assert_int_equal(vm_pathprof_decode(fid, 9, &d, NULL), -1); /* 9 paths: 0..8 */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_numbers),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_large),
        cmocka_unit_test(test_random_low_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
