#!/usr/bin/env bash
# run.sh: build a libFuzzer target against the vm/ and gc/ sources and run it.
#
#   tests/fuzz/run.sh load 600        # fuzz vm_bytecode_load for 600 s
#   tests/fuzz/run.sh compile 600     # fuzz vm_compile + dump/load round trip for 600 s
#   tests/fuzz/run.sh load 60 -jobs=2 -workers=2    # extra arguments go to libFuzzer
#
# Environment:
#   FUZZ_OUT         work folder (default build/fuzz): binaries, corpora, crash artifacts
#   FUZZ_SANITIZERS  default fuzzer,address,undefined (see README.md for Boehm GC and ASan)
#   TANDEM           tandem binary used to compile the .tbc seeds (default build/tandem,
#                    built with CMake when missing)
#
# Exit status: 0 when the run found nothing, libFuzzer's status otherwise (crash inputs are
# left in $FUZZ_OUT/artifacts_<target>/).
set -euo pipefail

usage() {
    echo "usage: $0 load|compile [seconds] [libFuzzer options...]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
target=$1
shift
case "$target" in load | compile) ;; *) usage ;; esac
secs=60
if [ $# -ge 1 ]; then
    case "$1" in '' | *[!0-9]*) usage ;; esac
    secs=$1
    shift
fi

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$root/build/fuzz}
san=${FUZZ_SANITIZERS:-fuzzer,address,undefined}
cc=${CC_FUZZ:-clang}
mkdir -p "$out"

# ---- build ---------------------------------------------------------------------------
# Every library folder (the command line, cli/, is not linked: the harness has its own main).
# Each source is compiled once into $out/obj/ (shared by both targets, rebuilt when it or any
# header is newer, or the flags changed), two at a time, and the harness links against them.
dirs=(vm vm/compiler vm/bytecode vm/threads vm/lib vm/prof gc cab profilers jit events)
sources=()
headers=()
includes=()
for d in "${dirs[@]}"; do
    includes+=(-I "$root/$d")
    for f in "$root/$d"/*.c; do [ -f "$f" ] && sources+=("$f"); done
    for f in "$root/$d"/*.h; do [ -f "$f" ] && headers+=("$f"); done
done
bin=$out/fuzz_$target
harness=$root/tests/fuzz/fuzz_$target.c
objdir=$out/obj
stamp=$objdir/flags
# The build's switches are 0/1 defines tested with #if (CMakeLists.txt): the JIT is built
# (its sources are linked), the path oracle is not.
flags="-g -O1 -std=c11 -D_GNU_SOURCE -DTANDEM_JIT=1 -DTANDEM_PATH_ORACLE=0 -fno-omit-frame-pointer -fsanitize=$san -fno-sanitize-recover=undefined"
# shellcheck disable=SC2046
cflags="$flags ${includes[*]} $(pkg-config --cflags bdw-gc hwloc libffi)"
mkdir -p "$objdir"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$flags" ]; then rm -f "$objdir"/*.o; fi
newest_header=$(ls -t "${headers[@]}" | head -1)
stale=()
objects=()
for f in "${sources[@]}"; do
    rel=${f#"$root"/}
    o=$objdir/${rel//\//_}
    o=${o%.c}.o
    objects+=("$o")
    if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then stale+=("$f"); fi
done
if [ ${#stale[@]} -gt 0 ]; then
    echo "run.sh: compiling ${#stale[@]} source(s) into $objdir ($san)" >&2
    # shellcheck disable=SC2016
    printf '%s\n' "${stale[@]}" | ROOT=$root OBJDIR=$objdir CC_FUZZ=$cc CFLAGS_FUZZ=$cflags \
        xargs -P "${FUZZ_JOBS:-2}" -I{} sh -c 'f={}; rel=${f#"$ROOT"/}; o=$OBJDIR/$(echo "$rel" | tr / _); exec $CC_FUZZ $CFLAGS_FUZZ -c "$f" -o "${o%.c}.o"'
    echo "$flags" >"$stamp"
fi
rebuild=no
[ -x "$bin" ] || rebuild=yes
for f in "${objects[@]}" "$harness"; do
    if [ "$f" -nt "$bin" ]; then rebuild=yes; break; fi
done
if [ $rebuild = yes ]; then
    echo "run.sh: linking $bin" >&2
    # shellcheck disable=SC2086,SC2046
    "$cc" $cflags "$harness" "${objects[@]}" -o "$bin" $(pkg-config --libs bdw-gc hwloc libffi) -lZydis -lm -lpthread
fi

# ---- seed corpus ---------------------------------------------------------------------
seeds=$out/seeds_$target
corpus=$out/corpus_$target
artifacts=$out/artifacts_$target
mkdir -p "$seeds" "$corpus" "$artifacts"
mapfile -t programs < <(find "$root/tests/programs" "$root/tests/bytecode" -name '*.lua' 2>/dev/null | sort)
if [ "$target" = compile ]; then
    for f in "${programs[@]}"; do
        rel=${f#"$root"/tests/}
        cp "$f" "$seeds/${rel//\//_}"
    done
    # Dictionary: the tokens of the language, so mutations make plausible programs.
    dict=$out/lua.dict
    : >"$dict"
    for w in and break do else elseif end false for function goto if in local nil not or \
        repeat return then true until while '<const>' '<close>' '...' '..' '::' '==' '~=' \
        '<=' '>=' '//' '<<' '>>' '[[' ']]' '--[[' 'self' '_ENV' 'setmetatable' 'pcall' \
        'coroutine.wrap' 'string.format' 'select' 'ipairs' 'pairs'; do
        printf '"%s"\n' "$w" >>"$dict"
    done
    dictarg=(-dict="$dict")
else
    tandem=${TANDEM:-$root/build/tandem}
    if [ ! -x "$tandem" ]; then
        echo "run.sh: building $tandem for the .tbc seeds" >&2
        cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
        cmake --build "$root/build" -j2 --target tandem >/dev/null
    fi
    n=0
    for f in "${programs[@]}"; do
        rel=${f#"$root"/tests/}
        dst="$seeds/${rel//\//_}"
        dst=${dst%.lua}.tbc
        if [ ! -f "$dst" ] || [ "$f" -nt "$dst" ]; then
            "$tandem" -c "$f" -o "$dst" 2>/dev/null || rm -f "$dst"
        fi
        [ -f "$dst" ] && n=$((n + 1))
    done
    if [ $n -eq 0 ]; then
        echo "run.sh: no .tbc seed could be made with $tandem -c" >&2
        exit 1
    fi
    dictarg=()
fi

# ---- run -------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:detect_stack_use_after_return=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
echo "run.sh: fuzzing $target for $secs s (seeds: $(find "$seeds" -type f | wc -l), corpus: $corpus)" >&2
status=0
"$bin" "$corpus" "$seeds" "${dictarg[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" || status=$?
if [ $status -eq 0 ]; then
    echo "run.sh: $target: no crash in $secs s"
else
    echo "run.sh: $target: libFuzzer exited with $status; inputs in $artifacts/" >&2
fi
exit $status
