#!/usr/bin/env python3
"""The ffi module end to end. lua5.4 has no ffi, so these are not differential tests:
ffi_calls.lua checks every result itself and prints one line per check; this runner requires
exit status 0, no FAIL line and exactly EXPECTED_CHECKS passed checks (so a script that stops
early, or skips checks, fails too). The script gets this runner's pid as its argument, which
is what getppid() must return in the tandem process. It runs a second time with a
collection every few allocations, which catches a signature (ffi_cif and its type array)
that the collector could free while its bound function is still alive, and a third time as a
green thread (foreign calls then run on a green thread's own stack). Uncaught ffi errors
are checked at the command line. ffi_threads.lua checks that a thread blocked in a foreign
call counts as stopped: collections in another thread finish while it is blocked."""
import os
import sys

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_CHECKS = 74
ENV = dict(os.environ)
ENV.setdefault("HOME", "/root")


def main():
    run = th.tandem_runner(th.tandem_option(), cwd=HERE, env=ENV, timeout=120)
    check = th.Checks()

    for opts in ([], ["-Xgc.stress=3"], ["-Xthreads=green"]):
        label = "ffi_calls.lua" + (" " + " ".join(opts) if opts else "")
        code, out, err = run(*opts, "ffi_calls.lua", str(os.getpid()))
        lines = out.splitlines()
        bad = [l for l in lines if l.startswith("FAIL")]
        passed = sum(1 for l in lines if l.startswith("ok "))
        check(label, code == 0 and not bad and passed == EXPECTED_CHECKS
              and lines[-1:] == [f"ffi: {EXPECTED_CHECKS} checks passed"],
              f"exit {code}, {passed} passed (expected {EXPECTED_CHECKS}), failed: {bad}, "
              f"stderr: {err.strip()!r}, last line: {lines[-1:]!r}")

    # ffi_threads.lua: collections complete while another thread is blocked in a C call
    # (green: the blocked thread holds its carrier, so the main thread needs a second one)
    want = "line\twoke\n\ncollections finished during the foreign call\ttrue\npclose\t0\n"
    for opts in ([], ["-Xthreads=green", "-Xcarriers=2"]):
        label = "ffi_threads.lua" + (" " + " ".join(opts) if opts else "")
        code, out, err = run(*opts, "ffi_threads.lua")
        check(label, code == 0 and out == want, f"exit {code}, {out!r}, stderr: {err.strip()!r}")

    code, out, err = run("-e", "ffi.load('libtandem_no_such_lib.so')")
    check("uncaught ffi.load error", code == 1
          and "ffi.load: cannot open 'libtandem_no_such_lib.so': " in err, f"{code} {err!r}")
    code, out, err = run("-e", "ffi.load('c'):func('tandem_no_such_symbol', 'int')")
    check("uncaught missing symbol", code == 1
          and "ffi: symbol 'tandem_no_such_symbol' not found in 'libc.so.6': " in err, f"{code} {err!r}")
    code, out, err = run("-e", "print(ffi.load('m'):func('cbrt', 'double', {'double'})(27))")
    check("-e call", code == 0 and out == "3.0\n", f"{code} {out!r} {err!r}")

    return check.finish("ffi tests")


if __name__ == "__main__":
    sys.exit(main())
