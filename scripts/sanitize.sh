#!/bin/sh
# Sanitizer builds and their test runs (tests/README.md, "Sanitizers"):
#   scripts/sanitize.sh address   build-asan/: -DTANDEM_SANITIZE=address,undefined, the whole suite
#   scripts/sanitize.sh thread    build-tsan/: -DTANDEM_SANITIZE=thread, the CAB, collector and thread
#                                 tests, with the JIT off (TANDEM_EXTRA_ARGS=-Xjit=off)
#   scripts/sanitize.sh [all]     both, one after the other
# Extra arguments go to ctest (e.g. -R threads_green2). RelWithDebInfo (readable reports, no
# LTO), warnings as errors, the path oracle on (profile_analyses requires it).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
which=${1:-all}
[ $# -gt 0 ] && shift

# Any report stops the program with a status no test expects (86; TSan's own is 66), so a
# finding fails its test even where the test expects a failing exit. detect_leaks=0: the
# collector's memory is never freed by design. detect_stack_use_after_return=0: fake stacks
# would put locals in ASan's heap, which Boehm does not scan (tests/fuzz/README.md).
ASAN_OPTIONS=halt_on_error=1:exitcode=86:detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=0
UBSAN_OPTIONS=halt_on_error=1:exitcode=86:print_stacktrace=1
# Suppressions: only races proven benign, each with its reason (scripts/tsan.supp).
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp"
# Every program's watchdog in tests/run_programs.py, x4: under ASan gc/closures_and_coroutines.lua
# (20,000 coroutines with finalizers) took 57 s of its 60 s at load average 9.
TANDEM_TIMEOUT_SCALE=4
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS TANDEM_TIMEOUT_SCALE

build() { # dir sanitizers
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_WERROR=ON -DTANDEM_PATH_ORACLE=ON \
          -DTANDEM_SANITIZE="$2" ${TANDEM_CMAKE_FLAGS:-} >/dev/null
    cmake --build "$1" -j"$(nproc)"
}

# The TSan subset (tests/README.md, "Sanitizers", says why these and not the others): the CAB
# rings with their producer and analyzer threads, the collector with coroutines and stacks,
# every thread program under native threads and green threads on 1, 2 and 4 carriers, and
# the profile tests (profile_analyses without its every-program section in this build:
# tests/profile/CMakeLists.txt). interp_threads_* are left out (with the JIT off they are
# threads_native and threads_green2 again).
TSAN_TESTS='^(unit_cab_|unit_gc_|threads_(native|green1|green2|green4)$|profile(_known|_analyses)?$)'

run_address() {
    build build-asan address,undefined
    (cd build-asan && ctest --output-on-failure -j"$(nproc)" "$@")
}

# -Xjit=off for every tandem the runners start (pylib/tandem_harness.py, extra_args): TSan does
# not see the JIT's generated code, so the release stores it makes (a CAB slot, a table slot
# publishing a new object) are missing to it and the other thread's acquiring reads are
# reported as races. The interpreter's accesses are C that TSan checks; the checks that
# compare the JIT with the interpreter skip themselves and say so. Extra ctest arguments come
# last, so `-R` given there replaces the subset.
run_thread() {
    build build-tsan thread
    (cd build-tsan && TANDEM_EXTRA_ARGS=-Xjit=off ctest --output-on-failure -j"$(nproc)" -R "$TSAN_TESTS" "$@")
}

case $which in
address) run_address "$@" ;;
thread) run_thread "$@" ;;
all) run_address "$@"; run_thread "$@" ;;
*) echo "usage: scripts/sanitize.sh [address|thread|all] [ctest args...]" >&2; exit 2 ;;
esac
