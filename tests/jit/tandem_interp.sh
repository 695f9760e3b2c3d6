#!/bin/sh
# tandem with -Xjit=off (the interpreter alone), for harnesses that take a binary but no extra
# options (bench/suite/check.py): TANDEM_BIN names the real binary.
exec "$TANDEM_BIN" -Xjit=off "$@"
