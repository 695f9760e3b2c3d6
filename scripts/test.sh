#!/bin/sh
# Builds Tandem (Release, warnings as errors, with the path oracle the pathprof tests compare
# against) and runs the whole test suite through ctest.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTANDEM_WERROR=ON -DTANDEM_PATH_ORACLE=ON ${TANDEM_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure -j"$(nproc)" "$@"
