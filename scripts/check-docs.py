#!/usr/bin/env python3
"""Checks that the documentation names only things that exist (python3, no dependencies).

1. Names in the design notes (by default docs/architecture.md; or the files given with
   --names FILE...): every `path/file.rs` (and every bare `file.rs`, and every `folder/`)
   written in backticks must exist in the tree; every `function_name()` must be a `fn` of the
   tree; every `Type::method` must be a `fn method` in a file that has an `impl` for `Type`.
2. With --zkctl BIN: every zkctl command shown in a shell block (```sh) of README.md,
   zkctl/README.md, CONTRIBUTING.md, docs/*.md and src/guide/**/*.md is run as
   `BIN COMMAND [ACTION] --help`, which must succeed (so a renamed or removed command, or
   action, fails here).

Prints each problem with its file and line, and exits 1 if there is any.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SKIP_DIRS = {"target", ".git", "node_modules", "__pycache__"}


def tree_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        for name in filenames:
            yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def load_sources():
    rs = {}
    for path in tree_files():
        if path.endswith(".rs"):
            with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
                rs[path] = f.read()
    return rs


def backticked(text):
    """(line number, span) for every `code span` outside fenced blocks."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for span in re.findall(r"`([^`]+)`", line):
            yield number, span


def check_names(doc, sources, problems):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    files = set(tree_files())
    basenames = {os.path.basename(p) for p in files}
    dirs = set()
    for p in files:
        parts = p.split(os.sep)
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
    dir_basenames = {d.rsplit("/", 1)[-1] for d in dirs}
    fns = {}
    for path, src in sources.items():
        for name in re.findall(r"\bfn\s+([A-Za-z_]\w*)", src):
            fns.setdefault(name, set()).add(path)
    for number, span in backticked(text):
        where = f"{doc}:{number}"
        for path in re.findall(r"(?<![\w/.-])([\w./-]+\.rs)\b", span):
            if "/" in path:
                if path not in files and not any(f.endswith("/" + path) for f in files):
                    problems.append(f"{where}: no file {path}")
            elif path not in basenames:
                problems.append(f"{where}: no file named {path} anywhere in the tree")
        m = re.fullmatch(r"([\w.-]+(?:/[\w.-]+)*)/", span.strip())
        if m:
            folder = m.group(1)
            if folder not in dirs and folder not in dir_basenames and not any(
                d.endswith("/" + folder) for d in dirs
            ):
                problems.append(f"{where}: no folder {folder}/")
        for ty, method in re.findall(r"\b([A-Z]\w*)::([a-z_]\w*)\b", span):
            holders = fns.get(method, set())
            impl = re.compile(r"\bimpl\b[^{;]*\b" + re.escape(ty) + r"\b")
            if not any(impl.search(sources[p]) for p in holders):
                problems.append(f"{where}: no fn {method} in an impl of {ty}")
        for name in re.findall(r"(?<![\w:.])([a-z_]\w*)\(\)", span):
            if name not in fns:
                problems.append(f"{where}: no fn {name}()")


def shell_blocks(text):
    """(line number, line) of every line inside a ```sh block."""
    inside = False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            inside = (not inside) and stripped in ("```sh", "```bash", "```shell")
            continue
        if inside:
            yield number, line


def value_flags(zkctl, args):
    """The long and short flags of `zkctl ARGS --help` that take a value."""
    out = run_help(zkctl, args)[1]
    flags = set()
    for line in out.split("\n"):
        for flag, value in re.findall(r"(-{1,2}[\w-]+)(?:[ =])(<[^>]+>|\[[^\]]+\])", line):
            if value.startswith("<"):
                flags.add(flag)
    return flags


def subcommands(help_text):
    names = set()
    section = False
    for line in help_text.split("\n"):
        if re.match(r"^\w[\w ]*:$", line.strip()) and not line.startswith(" "):
            section = line.strip() == "Commands:"
            continue
        if section:
            m = re.match(r"^\s{2}([a-z][\w-]*)\b", line)
            if m:
                names.add(m.group(1))
    return names


_help_cache = {}


def run_help(zkctl, args):
    key = tuple(args)
    if key not in _help_cache:
        done = subprocess.run(
            [zkctl, *args, "--help"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "ZK_SERVER": "127.0.0.1:1"},
        )
        _help_cache[key] = (done.returncode, done.stdout + done.stderr)
    return _help_cache[key]


def check_zkctl(zkctl, problems):
    docs = ["README.md", "zkctl/README.md", "CONTRIBUTING.md"]
    for path in sorted(tree_files()):
        if path.startswith("docs/") and path.endswith(".md"):
            docs.append(path)
        if path.startswith("src/guide/") and path.endswith(".md"):
            docs.append(path)
    global_flags = value_flags(zkctl, [])
    top = subcommands(run_help(zkctl, [])[1])
    checked = set()
    for doc in docs:
        full = os.path.join(ROOT, doc)
        if not os.path.exists(full):
            continue
        with open(full, encoding="utf-8") as f:
            text = f.read()
        for number, line in shell_blocks(text):
            code = line.split(" #", 1)[0]
            for segment in re.split(r"\||;|&&|\$\(|`", code):
                words = segment.split()
                if "zkctl" not in words:
                    continue
                words = words[words.index("zkctl") + 1 :]
                command = []
                i = 0
                while i < len(words) and len(command) < 2:
                    word = words[i]
                    if word == "--":
                        break
                    if word.startswith("-"):
                        flag = word.split("=", 1)[0]
                        if "=" not in word and (
                            flag in global_flags
                            or (command and flag in value_flags(zkctl, command))
                        ):
                            i += 1
                        i += 1
                        continue
                    if not command:
                        if word not in top:
                            problems.append(f"{doc}:{number}: zkctl has no command {word!r}")
                            break
                        command.append(word)
                    else:
                        subs = subcommands(run_help(zkctl, command)[1])
                        if subs and word in subs:
                            command.append(word)
                        break
                    i += 1
                if not command or tuple(command) in checked:
                    continue
                checked.add(tuple(command))
                code_, out = run_help(zkctl, command)
                if code_ != 0:
                    problems.append(
                        f"{doc}:{number}: `zkctl {' '.join(command)} --help` exited {code_}: "
                        + out.strip().split("\n")[0]
                    )
    print(f"check-docs: `zkctl COMMAND --help` ran for {len(checked)} commands shown in the docs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--names", nargs="*", default=["docs/architecture.md"])
    parser.add_argument("--zkctl", help="a zkctl binary: check every command the docs show")
    args = parser.parse_args()
    problems = []
    sources = load_sources()
    for doc in args.names:
        check_names(doc, sources, problems)
    if args.zkctl:
        check_zkctl(args.zkctl, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-docs: {len(problems)} problems")
        return 1
    print("check-docs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
