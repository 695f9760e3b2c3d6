#!/usr/bin/env python3
"""The `lua` command line, against lua5.4: each case runs `lua5.4 ARGS` and `tandem ARGS`
with the same environment, standard input and current folder (a fresh copy of
tests/cli/lua_cli/), and their stdout, stderr and exit status must be equal, byte for
byte, once these differences, each one by design (cli/README.md), are written the same way:

  - the program's name: lua5.4 names itself by argv[0] ("lua5.4: ...", "usage: lua5.4"),
    Tandem always "tandem"; argv[0] itself (in arg[-N]) is lua5.4's "lua5.4" and Tandem's
    path. Both become <prog>.
  - the version line (-v, -i): Tandem's own, not Lua.org's copyright.
  - the usage message: Tandem's has its own options after lua5.4's list.
  - a syntax error in a chunk of the command line carries its column in Tandem
    ("x.lua:3:7: ...", tests/README.md); the column is dropped.
  - with --readline OFF (a tandem built without readline), lua5.4's readline echoes each
    line it reads from a non-terminal after the prompt and Tandem does not: the echoes are
    taken out of lua5.4's output.

Some cases run again with -X options put among lua's options (before, between, after
them): the output must not change, except where the case prints arg's negative indices.
Without lua5.4 on the machine the test is skipped (status 77), not passed.

  PYTHONPATH=pylib python3 tests/cli/run_lua_cli_tests.py --tandem build/tandem [--readline ON|OFF]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

import tandem_harness as th

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "lua_cli")
LUA = "lua5.4"
LUA_VERSION = "Lua 5.4.4  Copyright (C) 1994-2022 Lua.org, PUC-Rio"
TANDEM_VERSION = "Tandem 0.1 (Lua 5.4 compatible)"

# Lines of a REPL session used by several cases.
REPL = "\n".join([
    "print(1)", "1+1", "=2,3", "x = ", "5", "print(x)", "for i=1,2 do", "print(i)", "end",
    "error('x')", "error({})", "error(setmetatable({}, {__tostring = function() return 'TS' end}))",
    "local s = [[a", "b]]", "return 1, 2", "'abc'", "f(", "nil", "x y", "local t <close> = nil",
    "return ...", "return arg[0], #arg", "_PROMPT = '$ '", "_PROMPT2 = setmetatable({}, {__tostring = function() return '>>>' end})",
    "if true then", "print('in')", "end", "print = nil", "1", "print = function(...) error('no print') end", "2",
]) + "\n"

# (name, argv after the program, environment additions, stdin). Environment values of None
# remove the variable.
CASES = [
    # options and their errors
    ("e", ["-e", "print(1)"], {}, ""),
    ("e attached", ["-eprint(1, 2)"], {}, ""),
    ("e twice in order", ["-e", "x = 1", "-e", "print(x + 1)"], {}, ""),
    ("e missing argument", ["-e"], {}, ""),
    ("e followed by option", ["-e", "-i"], {}, ""),
    ("l missing argument", ["-l"], {}, ""),
    ("unknown option", ["-x"], {}, ""),
    ("unknown long option", ["--x"], {}, ""),
    ("W with extra", ["-Wx"], {}, ""),
    ("E with extra", ["-Ex"], {}, ""),
    ("i with extra", ["-ix"], {}, ""),
    ("v with extra", ["-vv"], {}, ""),
    ("bad option after good ones", ["-e", "print(1)", "-y", "script.lua"], {}, ""),
    ("v", ["-v"], {}, "print('not run')"),
    ("v and e", ["-v", "-e", "print(2)"], {}, ""),
    ("e syntax error", ["-e", "x ="], {}, ""),
    ("e runtime error", ["-e", "error('boom')"], {}, ""),
    ("e error table", ["-e", "error({})"], {}, ""),
    ("e error tostring", ["-e", "error(setmetatable({}, {__tostring = function() return 'TS' end}))"], {}, ""),
    ("e error nil", ["-e", "error()"], {}, ""),
    ("e error number", ["-e", "error(42)"], {}, ""),
    ("e stops at first error", ["-e", "print(1)", "-e", "error('e2')", "-e", "print(3)"], {}, ""),
    ("os.exit", ["-e", "io.write('a') os.exit(3)"], {}, ""),
    ("os.exit false", ["-e", "os.exit(false)"], {}, ""),
    # scripts, arguments, stdin
    ("script args", ["args.lua", "a", "b c", ""], {}, ""),
    ("script args after options", ["-e", "x = 1", "args.lua", "-e", "--", "-"], {}, ""),
    ("no script arg table", ["-e", "for i = -1, #arg do print(i, arg[i]) end", "--"], {}, ""),
    ("script missing", ["missing.lua"], {}, ""),
    ("script is a folder", ["."], {}, ""),
    ("script runtime error", ["fail.lua"], {}, ""),
    ("script syntax error", ["syntax.lua"], {}, ""),
    ("script returns values", ["returns.lua"], {}, ""),
    ("shebang", ["shebang.lua"], {}, ""),
    ("arg changed by -e", ["-e", "arg = {'x', 'y'}", "args.lua", "a"], {}, ""),
    ("arg not a table", ["-e", "arg = 1", "args.lua"], {}, ""),
    ("dash is stdin", ["-", "a", "b"], {}, "print('stdin', ...) print(arg[0], #arg)"),
    ("dash after options", ["-e", "x = 5", "-", "a"], {}, "print(x, ...)"),
    ("dash dash dash is a file", ["--", "-"], {}, "print('not run')"),
    ("dash dash script", ["--", "args.lua", "-x"], {}, ""),
    ("dash dash alone", ["--"], {}, "print('stdin', ...)"),
    ("stdin without arguments", [], {}, "print('stdin', ..., arg[0], #arg)"),
    ("stdin error exits 0", [], {}, "print(1) error('late')"),
    ("stdin syntax error exits 0", [], {}, "x ="),
    ("stdin not read after e", ["-e", "print(1)"], {}, "print('not run')"),
    # LUA_INIT
    ("LUA_INIT", ["-e", "print(x)"], {"LUA_INIT": "x = 'init'"}, ""),
    ("LUA_INIT_5_4 first", ["-e", "print(x)"], {"LUA_INIT": "x = 'plain'", "LUA_INIT_5_4": "x = 'versioned'"}, ""),
    ("LUA_INIT file", ["-e", "print(x)"], {"LUA_INIT": "@init.lua"}, ""),
    ("LUA_INIT missing file", ["-e", "print(x)"], {"LUA_INIT": "@nosuch.lua"}, ""),
    ("LUA_INIT error", ["-e", "print(x)"], {"LUA_INIT": "error('in init')"}, ""),
    ("LUA_INIT syntax error", ["-e", "print(x)"], {"LUA_INIT_5_4": "x ="}, ""),
    ("LUA_INIT before e and script", ["-e", "print('e', x)", "args.lua"], {"LUA_INIT": "print('init') x = 1"}, ""),
    ("E ignores LUA_INIT", ["-E", "-e", "print(x)"], {"LUA_INIT": "x = 'init'"}, ""),
    # package.path and package.cpath
    ("default paths", ["-e", "print(package.path) print(package.cpath)"], {}, ""),
    ("LUA_PATH", ["-e", "print(package.path)"], {"LUA_PATH": "/a/?.lua"}, ""),
    ("LUA_PATH default in middle", ["-e", "print(package.path)"], {"LUA_PATH": "/a/?.lua;;/b/?.lua"}, ""),
    ("LUA_PATH default first", ["-e", "print(package.path)"], {"LUA_PATH": ";;/b/?.lua"}, ""),
    ("LUA_PATH default last", ["-e", "print(package.path)"], {"LUA_PATH": "/a/?.lua;;"}, ""),
    ("LUA_PATH only default", ["-e", "print(package.path)"], {"LUA_PATH": ";;"}, ""),
    ("LUA_PATH_5_4 first", ["-e", "print(package.path)"], {"LUA_PATH": "/a/?.lua", "LUA_PATH_5_4": "/v/?.lua;;"}, ""),
    ("LUA_CPATH", ["-e", "print(package.cpath)"], {"LUA_CPATH": "/c/?.so;;"}, ""),
    ("LUA_CPATH_5_4", ["-e", "print(package.cpath)"], {"LUA_CPATH": "/c/?.so", "LUA_CPATH_5_4": "/v/?.so"}, ""),
    ("E ignores LUA_PATH", ["-E", "-e", "print(package.path) print(package.cpath)"],
     {"LUA_PATH": "/a/?.lua", "LUA_CPATH_5_4": "/c/?.so"}, ""),
    ("require along LUA_PATH", ["-e", "print(require('found'))"], {"LUA_PATH": "sub/?.lua"}, ""),
    ("require not found with LUA_PATH", ["-e", "require('nowhere')"], {"LUA_PATH": "/a/?.lua;;", "LUA_CPATH": "/c/?.so"}, ""),
    # -l
    ("l module", ["-l", "mod", "-e", "print(mod.name, mod.loaded_as)"], {}, ""),
    ("l attached", ["-lmod", "-e", "print(mod.name)"], {}, ""),
    ("l global name", ["-l", "m=mod", "-e", "print(m.name, mod)"], {}, ""),
    ("l library", ["-l", "s=string", "-e", "print(s == string)"], {}, ""),
    ("l missing module", ["-l", "nosuchmod"], {}, ""),
    ("l module error", ["-l", "badmod", "-e", "print('not run')"], {}, ""),
    ("l and e in order", ["-e", "package.path = 'sub/?.lua'", "-l", "found", "-e", "print(found)"], {}, ""),
    # warn and -W
    ("warn off by default", ["-e", "warn('hidden') print('after')"], {}, ""),
    ("W", ["-W", "-e", "warn('shown', ' in ', 'pieces')"], {}, ""),
    ("W in order", ["-e", "warn('before')", "-W", "-e", "warn('after')"], {}, ""),
    ("warn control", ["-e", "warn('@on') warn('a') warn('@off') warn('b') warn('@on') warn('c', 1, 2.5)"], {}, ""),
    ("warn unknown control", ["-W", "-e", "warn('@what') warn('@on', 'x') warn('x', '@off') warn('y')"], {}, ""),
    ("warn bad argument", ["-e", "warn()"], {}, ""),
    ("warn bad second argument", ["-W", "-e", "warn('a', {})"], {}, ""),
    ("warn from script", ["-W", "warn.lua"], {}, ""),
    # the interactive loop
    ("i", ["-i"], {}, REPL),
    ("i after script", ["-i", "args.lua", "p", "q"], {}, REPL),
    ("i after e", ["-e", "y = 7", "-i"], {}, "y\n=y * 2\n"),
    ("i with dash", ["-i", "-", "a"], {}, "print('stdin', ...)\nprint('more')\n"),
    ("i with warnings", ["-W", "-i"], {}, "warn('w1')\nwarn('@off')\nwarn('w2')\n"),
    ("i end of input in continuation", ["-i"], {}, "for i = 1, 2 do\nprint(i)\n"),
    ("i end of input in continuation with _PROMPT2", ["-i"], {}, "_PROMPT2 = '>>>'\nlocal function f()\n"),
    ("i syntax errors", ["-i"], {}, "x = = 1\n'unfinished\nreturn return\n)\n"),
    ("i empty lines", ["-i"], {}, "\n\n1\n\n"),
    ("i after failing script", ["-i", "fail.lua"], {}, "print('not reached')\n"),
]

# Cases run again with these -X options inserted (every one works among lua's options),
# and the positions they go to. Cases that print arg's indices (where the -X options are)
# are left out.
X_OPTIONS = ["-Xjit=off", "-Xgc.stress=50"]
X_CASES = ["e twice in order", "shebang", "script runtime error", "LUA_INIT", "l global name", "W in order",
           "warn from script", "i after e", "dash after options", "unknown option", "e missing argument"]


def clean_env(extra, inputrc):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}
    # readline: no terminal features, no user key bindings (an empty file: /dev/null is
    # not always empty in a sandbox), in both programs
    env.update({"TERM": "dumb", "INPUTRC": inputrc})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


# The prompts the cases use (the defaults and REPL's _PROMPT and _PROMPT2).
PROMPTS = ("> ", ">> ", "$ ", ">>>")


def strip_echo(out, stdin):
    """lua5.4's stdout without readline's echo of each line it read: the line and its
    newline right after the next prompt."""
    res, pos = [], 0
    for line in stdin.splitlines():
        hits = [(k + len(p), p) for p in PROMPTS for k in [out.find(p + line + "\n", pos)] if k >= 0]
        if not hits:
            break
        k = min(hits)[0]
        res.append(out[pos:k])
        pos = k + len(line) + 1
    res.append(out[pos:])
    return "".join(res)


def normalise(text, prog_names, is_tandem):
    for p in prog_names:
        text = text.replace(p, "<prog>")
    text = text.replace(LUA_VERSION, "<version>").replace(TANDEM_VERSION, "<version>")
    if is_tandem:
        text = re.sub(r"(?m)^tandem: ", "<prog>: ", text)
        text = text.replace("usage: tandem ", "usage: <prog> ")
        # Tandem's own options, after lua5.4's usage list
        text = re.sub(r"Tandem's options:\n(  .*\n)*", "", text)
        # the column of a syntax error on the command line
        text = re.sub(r"(?m)^(<prog>: [^\n]*?:\d+):\d+: ", r"\1: ", text)
    return text


def run_case(tandem, readline, check, name, args, env_extra, stdin, x_opts=None):
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.join(tmp, "cwd")
        shutil.copytree(FILES, cwd)
        inputrc = os.path.join(tmp, "inputrc")
        open(inputrc, "w").close()
        env = clean_env(env_extra, inputrc)
        lua = th.run_once([LUA, *args], cwd=cwd, env=env, stdin=stdin, timeout=30)
        targs = args
        if x_opts is not None:
            # one -X option before everything, one after the first of lua's options (and
            # its argument, if it takes one)
            cut = 2 if args and args[0] in ("-e", "-l") else 1 if args and args[0].startswith("-") else 0
            targs = [x_opts[0], *args[:cut], x_opts[1], *args[cut:]]
            name = f"{name} [{' '.join(x_opts)}]"
        tan = th.run_once([tandem, *targs], cwd=cwd, env=env, stdin=stdin, timeout=60)
    lua_out = lua.out if readline else strip_echo(lua.out, stdin)
    want = (lua.code, normalise(lua_out, [LUA], False), normalise(lua.err, [LUA], False))
    got = (tan.code, normalise(tan.out, [tandem], True), normalise(tan.err, [tandem], True))
    for what, i in (("exit status", 0), ("stdout", 1), ("stderr", 2)):
        check(f"{name}: {what}", want[i] == got[i], f"lua5.4 {want[i]!r}\n     tandem {got[i]!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=None)
    ap.add_argument("--readline", default="ON", choices=["ON", "OFF"],
                    help="whether this tandem was built with readline (TANDEM_READLINE)")
    ap.add_argument("--filter", default="", help="only the cases whose name contains this")
    opts = ap.parse_args()
    tandem = th.find_tandem(opts.tandem, required=True)
    if shutil.which(LUA) is None:
        print(f"skipped: no {LUA} to compare with")
        return 77
    check = th.Checks()
    readline = opts.readline == "ON"
    for name, args, env, stdin in CASES:
        if opts.filter in name:
            run_case(tandem, readline, check, name, args, env, stdin)
    for name, args, env, stdin in CASES:
        if name in X_CASES and opts.filter in name:
            run_case(tandem, readline, check, name, args, env, stdin, X_OPTIONS)
    return check.finish("the lua command line against lua5.4")


if __name__ == "__main__":
    sys.exit(main())
