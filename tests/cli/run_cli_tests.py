#!/usr/bin/env python3
"""Command-line behaviour of tandem: options, usage errors, missing files, bytecode
round trip, listings, heap cap, tracebacks. Each case checks exit status and output."""
import os
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    tandem = th.tandem_option()
    run = th.tandem_runner(tandem, cwd=HERE, timeout=60)
    check = th.Checks()

    code, out, err = run("-Xnosuch=1", "hello.lua")
    check("unknown -X option", code == 2 and "-Xnosuch" in err and "-Xdump" in err, f"{code} {err!r}")
    code, out, err = run("-Xdump=nope", "hello.lua")
    check("bad -Xdump value", code == 2 and "'nope'" in err and "bytecode" in err, f"{code} {err!r}")
    code, out, err = run("-Xgc.stress=abc", "hello.lua")
    check("bad -Xgc.stress value", code == 2 and "-Xgc.stress" in err, f"{code} {err!r}")
    code, out, err = run("-Xgc.maxheap=12q", "hello.lua")
    check("bad -Xgc.maxheap value", code == 2 and "-Xgc.maxheap" in err, f"{code} {err!r}")
    # lua's options and their errors are lua5.4's (run_lua_cli_tests.py compares them); a
    # bad lua option exits 1 as in lua5.4, Tandem's own options exit 2
    code, out, err = run("--frobnicate")
    check("unknown option", code == 1 and "unrecognized option '--frobnicate'" in err and "usage" in err
          and "-Xname=value" in err, f"{code} {err!r}")
    code, out, err = run("-c")
    check("-c without a file", code == 2 and "'-c' needs an argument" in err, f"{code} {err!r}")
    code, out, err = run("-o", "x.tbc", "hello.lua")
    check("-o without -c", code == 2 and "-o needs -c" in err, f"{code} {err!r}")
    code, out, err = run("-Xdump=bytecode", "-e", "print(1)")
    check("-Xdump=bytecode without a script", code == 2 and "needs a script" in err, f"{code} {err!r}")
    code, out, err = run("-h")
    check("-h", code == 0 and out.startswith("usage: tandem [options] [script [args]]\n") and "-X " in out,
          f"{code} {out!r}")
    code, out, err = run("-v")
    check("-v", code == 0 and out == "Tandem 0.1 (Lua 5.4 compatible)\n" and err == "", f"{code} {out!r} {err!r}")
    code, out, err = run(stdin="")
    check("no script: stdin (empty) runs", code == 0 and out == "" and err == "", f"{code} {out!r} {err!r}")
    # -X options are the interpreter's options: negative indices of arg, like lua's
    code, out, err = run("-Xjit=off", "-e", "x = 1", "-Xgc.stress=9", "hello.lua", "a",
                         "-e", "print(arg[-5] ~= nil, arg[-4], arg[-3], arg[-2], arg[-1], arg[0], arg[1])")
    check("-X options in arg", code == 0 and out.endswith("hello, tandem 3\n"), f"{code} {out!r} {err!r}")
    code, out, err = run("-Xjit=off", "-e", "x = 1", "-Xgc.stress=9", "-e",
                         "print(arg[0] ~= nil, arg[1], arg[2], arg[3], arg[4], arg[5], arg[6])")
    check("-X options in arg without a script",
          code == 0 and out == "true\t-Xjit=off\t-e\tx = 1\t-Xgc.stress=9\t-e\tprint(arg[0] ~= nil, arg[1], "
          "arg[2], arg[3], arg[4], arg[5], arg[6])\n", f"{code} {out!r} {err!r}")
    # C libraries load through vm/capi/ (tests/capi/ exercises them); here the command
    # line's side: package.loadlib's three results on failure, and a searcher's message
    # for a library that is not one, worded as lua5.4's (dlerror's text)
    code, out, err = run("-e", "print(type(package.loadlib('/lib/x86_64-linux-gnu/libc.so.6', 'puts')))")
    check("package.loadlib", code == 0 and out == "function\n", f"{code} {out!r} {err!r}")
    code, out, err = run("-e", "print(package.loadlib('/lib/x86_64-linux-gnu/libc.so.6', 'no_such_fn'))")
    check("package.loadlib init", code == 0 and out == "nil\t/lib/x86_64-linux-gnu/libc.so.6: undefined symbol: "
          "no_such_fn\tinit\n", f"{code} {out!r} {err!r}")
    code, out, err = run("-e", "package.loadlib('x')")
    check("package.loadlib argument", code == 1 and "bad argument #2 to 'loadlib' (string expected, got no value)"
          in err, f"{code} {err!r}")
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "cmod.so"), "w").close()
        code, out, err = run("-e", "print(pcall(require, 'cmod.sub'))", cwd=tmp)
        check("C module found", code == 0 and out == "false\terror loading module 'cmod.sub' from file './cmod.so':"
              "\n\t./cmod.so: file too short\n", f"{code} {out!r} {err!r}")
    code, out, err = run("-X")
    check("-X lists options", code == 0 and "-Xdump" in out and "-Xgc.stress" in out and "default" in out,
          f"{code} {out!r}")
    code, out, err = run("no_such_file.lua")
    check("missing file", code == 1 and "cannot open no_such_file.lua" in err, f"{code} {err!r}")

    code, out, err = run("hello.lua")
    check("run source", code == 0 and out == "hello, tandem 1\nhello, tandem 2\nhello, tandem 3\n", f"{code} {out!r}")
    with tempfile.TemporaryDirectory() as tmp:
        tbc = os.path.join(tmp, "hello.tbc")
        code, out2, err = run("-c", "hello.lua", "-o", tbc)
        check("compile", code == 0 and os.path.getsize(tbc) > 0, f"{code} {err!r}")
        code, out2, err = run(tbc)
        check("run bytecode", code == 0 and out2 == out, f"{code} {out2!r} {err!r}")
        # lua.c's luaL_loadfile: a binary chunk may follow a first line starting with '#'
        # (it was compiled as source: "unexpected symbol near '<\27>'")
        shebang = os.path.join(tmp, "hello_bin")
        with open(tbc, "rb") as src, open(shebang, "wb") as dst:
            dst.write(b"#!/usr/bin/env tandem\n" + src.read())
        code, out2, err = run(shebang)
        check("run bytecode after a # line", code == 0 and out2 == out, f"{code} {out2!r} {err!r}")
        with open(shebang, "rb") as f:
            code, out2, err = run("-", stdin=f.read())
        check("bytecode after a # line on stdin", code == 0 and out2 == out, f"{code} {out2!r} {err!r}")
    code, out, err = run("-Xdump=bytecode", "hello.lua")
    check("bytecode listing", code == 0 and "GETTABUP" in out and "CALL" in out and "[2]" in out,
          f"{code} {out[:300]!r}")
    code, out, err = run("-e", "print(7 // 2, 7 / 2)")
    check("-e chunk", code == 0 and out == "3\t3.5\n", f"{code} {out!r}")
    code, out, err = run("-", stdin="print('from stdin')")
    check("stdin script", code == 0 and out == "from stdin\n", f"{code} {out!r}")

    code, out, err = run("-Xdump=bytecode", "-", stdin="print(1)")
    check("bytecode listing of stdin", code == 0 and "GETTABUP" in out, f"{code} {out[:300]!r} {err!r}")

    code, out, err = run("traceback.lua")
    lines = err.splitlines()
    check("runtime error message",
          code == 1 and lines and lines[0] == "tandem: traceback.lua:2: attempt to index a nil value (local 'x')",
          f"{code} {err!r}")
    check("traceback frames", "stack traceback:" in err and "traceback.lua:2: in " in err
          and "traceback.lua:5: in " in err and "traceback.lua:7: in main chunk" in err, err)

    # a table constructor's register replaced by debug.setlocal: an error, not a store into a
    # number (lua5.4 crashes there), with the JIT on and off (the JIT steps SETLIST)
    for jit in ("on", "off"):
        code, out, err = run("-Xjit=" + jit, "setlocal_constructor.lua")
        check("constructor after debug.setlocal, jit " + jit,
              code == 0 and out == "false\tattempt to index a number value\ntrue\t7\t3\t1\t2\t3\n", f"{code} {out!r} {err!r}")

    code, out, err = run("-Xgc.maxheap=64m", "oom.lua")
    check("out of memory caught", out.startswith("caught\tfalse\tnot enough memory\n1000\n"), f"{out!r}")
    check("out of memory uncaught", code == 1 and "not enough memory" in err and "Warning" not in err,
          f"{code} {err!r}")

    return check.finish("cli")


if __name__ == "__main__":
    sys.exit(main())
