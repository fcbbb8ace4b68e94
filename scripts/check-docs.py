#!/usr/bin/env python3
"""Checks that the documentation names only things that exist (python3, no dependencies).

1. Names in the design notes (by default docs/architecture.md; or the files given with
   --names FILE...): every `path/file.rs` (and every bare `file.rs`, and every `folder/`)
   written in backticks must exist in the tree; every `function_name()` must be a `fn` of the
   tree; every `Type::method` must be a `fn method` in a file that has an `impl` for `Type`.
2. The architecture note (docs/architecture.md) besides: no table cell over 300 characters;
   a paragraph for every crate folder (the workspace's members and excluded packages, the
   crates under examples/, the root), opening with the folder and its package name
   (**`client/`** (`zkrs-client`...), and none for a folder that is no crate; in the table
   of "The path of one request", every row names one file that exists and functions defined
   in that file (`Type::method` in an impl of Type there, or `name()`). A step whose function
   moved says where a function of that name is now.
3. With --zkctl BIN: every zkctl command shown in a shell block (```sh) of README.md,
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


ARCHITECTURE = "docs/architecture.md"
MAX_CELL = 300
PATH_SECTION = "## The path of one request"
ROOT_PARAGRAPH = "**The root**"


def table_rows(text):
    """(line number, cells) of every table row outside fenced blocks, separator rows left out."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        yield number, cells


def package_name(folder):
    """The `name` of the [package] in FOLDER/Cargo.toml, or None."""
    path = os.path.join(ROOT, folder, "Cargo.toml")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^\[package\][^\[]*?^name\s*=\s*\"([^\"]+)\"", text, re.M | re.S)
    return m.group(1) if m else None


def crate_folders():
    """{folder: package name} of the workspace's members and excluded packages, the crates
    under examples/, and the root ("." )."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read()
    folders = []
    for key in ("members", "exclude"):
        m = re.search(r"^" + key + r"\s*=\s*\[([^\]]*)\]", text, re.M)
        if m:
            folders += re.findall(r"\"([^\"]+)\"", m.group(1))
    examples = os.path.join(ROOT, "examples")
    if os.path.isdir(examples):
        for name in sorted(os.listdir(examples)):
            if os.path.isfile(os.path.join(examples, name, "Cargo.toml")):
                folders.append(f"examples/{name}")
    out = {folder: package_name(folder) for folder in folders}
    out["."] = package_name(".")
    return out


def defined_in(sources, path, ty, name):
    """Whether `fn name` is in file `path` (and, with `ty`, that file has an impl of `ty`)."""
    src = sources.get(path)
    if src is None or not re.search(r"\bfn\s+" + re.escape(name) + r"\b", src):
        return False
    return ty is None or re.search(r"\bimpl\b[^{;]*\b" + re.escape(ty) + r"\b", src)


def check_architecture(sources, problems):
    with open(os.path.join(ROOT, ARCHITECTURE), encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    for number, cells in table_rows(text):
        for cell in cells:
            if len(cell) > MAX_CELL:
                problems.append(f"{ARCHITECTURE}:{number}: a table cell of {len(cell)} characters "
                                f"(at most {MAX_CELL}): {cell[:60]}...")

    # One paragraph per crate folder, opening with the folder and its package name.
    found = {}
    for number, line in enumerate(lines, 1):
        m = re.match(r"\*\*`([\w./-]+)/`\*\* \(`([\w-]+)`", line)
        if m:
            found[m.group(1)] = (number, m.group(2))
        m = re.match(re.escape(ROOT_PARAGRAPH) + r" \(`([\w-]+)`", line)
        if m:
            found["."] = (number, m.group(1))
    for folder, package in sorted(crate_folders().items()):
        shown = "the root" if folder == "." else f"{folder}/"
        if folder not in found:
            problems.append(f"{ARCHITECTURE}: no paragraph for the crate in {shown} "
                            f"(`{package}`): one opening **`{folder}/`** (`{package}`)"
                            if folder != "." else
                            f"{ARCHITECTURE}: no paragraph for the root crate (`{package}`): "
                            f"one opening {ROOT_PARAGRAPH} (`{package}`)")
        elif package and found[folder][1] != package:
            problems.append(f"{ARCHITECTURE}:{found[folder][0]}: the paragraph for {shown} names "
                            f"`{found[folder][1]}`, but its package is `{package}`")
    for folder, (number, _) in sorted(found.items()):
        if folder not in crate_folders():
            problems.append(f"{ARCHITECTURE}:{number}: a paragraph for {folder}/, which is not a "
                            "crate folder (no workspace member, excluded package or example)")

    # The path table: each step's file exists and defines the step's functions.
    start = next((i for i, line in enumerate(lines) if line.strip() == PATH_SECTION), None)
    if start is None:
        problems.append(f"{ARCHITECTURE}: no section {PATH_SECTION!r}")
        return
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    section = "\n".join(lines[start:end])
    rows = list(table_rows(section))
    if not rows or [c.lower() for c in rows[0][1][:2]] != ["file", "function"]:
        problems.append(f"{ARCHITECTURE}:{start + 1}: the path section has no table whose "
                        "columns start with `file | function`")
        return
    for offset, cells in rows[1:]:
        number = start + offset
        where = f"{ARCHITECTURE}:{number}: path table"
        files = re.findall(r"`([\w./-]+\.rs)`", cells[0])
        functions = re.findall(r"`(?:([A-Z]\w*)::)?([a-z_]\w*)(?:\(\))?`", cells[1])
        if len(files) != 1 or not functions:
            problems.append(f"{where}: a row names one file and its functions "
                            f"(`file.rs` | `Type::method` or `name()`), not {cells[:2]}")
            continue
        path = files[0]
        if path not in sources:
            problems.append(f"{where}: the file {path} is gone")
            continue
        for ty, name in functions:
            if defined_in(sources, path, ty or None, name):
                continue
            shown = f"{ty}::{name}" if ty else f"{name}()"
            elsewhere = sorted(p for p in sources if defined_in(sources, p, ty or None, name))
            hint = f"; a fn {name} is now in {', '.join(elsewhere[:3])}" if elsewhere else \
                "; no such fn anywhere in the tree"
            problems.append(f"{where}: `{shown}` is gone from {path}{hint}")


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
        if doc == ARCHITECTURE:
            check_architecture(sources, problems)
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
