#!/bin/sh
# Sanitizer builds and their test runs (tests/README.md, "Sanitizers"):
#   scripts/sanitize.sh address   build-asan/: -DTANDEM_SANITIZE=address,undefined, the whole suite
#   scripts/sanitize.sh thread    build-tsan/: -DTANDEM_SANITIZE=thread, the CAB and collector tests
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
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

build() { # dir sanitizers
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_WERROR=ON -DTANDEM_PATH_ORACLE=ON \
          -DTANDEM_SANITIZE="$2" ${TANDEM_CMAKE_FLAGS:-} >/dev/null
    cmake --build "$1" -j"$(nproc)"
}

# The TSan subset: the CAB rings with their producer and analyzer threads, and the collector
# with coroutines and stacks. Not yet the threads_* and profile* tests: they still have
# reports that are not settled (tests/README.md, "Sanitizers": open findings).
TSAN_TESTS='^(unit_cab_|unit_gc_)'

run_address() {
    build build-asan address,undefined
    (cd build-asan && ctest --output-on-failure -j"$(nproc)" "$@")
}

run_thread() {
    build build-tsan thread
    (cd build-tsan && ctest --output-on-failure -j"$(nproc)" -R "$TSAN_TESTS" "$@")
}

case $which in
address) run_address "$@" ;;
thread) run_thread "$@" ;;
all) run_address "$@"; run_thread "$@" ;;
*) echo "usage: scripts/sanitize.sh [address|thread|all] [ctest args...]" >&2; exit 2 ;;
esac
