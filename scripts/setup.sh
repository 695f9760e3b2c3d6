#!/bin/sh
# Installs the Debian packages Tandem needs (only the missing ones), builds it in Release
# and runs the bundled example. Run as root on Debian 12 (or with sudo available).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="build-essential cmake pkg-config libgc-dev libffi-dev libhwloc-dev libcmocka-dev python3 lua5.4 luajit valgrind libzydis-dev gnuplot-nox libreadline-dev liblua5.4-dev lua-cjson lua-lpeg lua-filesystem lua-socket libprotobuf-c-dev protobuf-c-compiler zlib1g-dev protobuf-compiler python3-protobuf chromium"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "setup: installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTANDEM_WERROR=OFF -DTANDEM_PATH_ORACLE=OFF ${TANDEM_CMAKE_FLAGS:-} >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: running examples/hello.lua"
build/tandem examples/hello.lua
