#!/usr/bin/env python3
"""Checks the workspace's file structure: no import circle among the files of a crate, no file
over 800 lines outside tests/, benches/ and examples/, and no function over 100 lines outside
tests.

For each crate's src/ it builds the file-level import graph: file A imports file B when A names
something that lives in B, through `use crate::…`, `use super::…`, `use self::…`, a `use` of a
child module, or a path written in the code (`crate::x::f()`, `super::y::Z`, `child::g()`).
A `mod x;` declaration maps module paths to files but is not by itself an import, nor is a
parent's re-export of its own submodules' items (`pub use x::Y`: the module declaring its
face); a parent that uses them in its own code does import them. A path through a module that
binds a name (`pub use`, or a private `use` its children reach with `super::`) is followed to
the file that defines it, so a `mod.rs` that only re-exports is not made part of a circle by
its children. Comments, doc comments and strings are skipped.
What names no path is not seen: a method called on a value (`x.f()`, where `f` is in an
`impl` block of another file), or a macro used by its bare name.

Every crate root of the workspace (src/lib.rs, src/main.rs, src/bin/*.rs of each package)
forbids unsafe code (`#![forbid(unsafe_code)]`), or denies it (`#![deny(unsafe_code)]`) where
one item needs an `#[allow(unsafe_code)]` of its own.

No function over 100 lines outside tests (tests/, benches/, examples/, `#[cfg(test)]` modules
and items, a module's file declared under `#[cfg(test)]`, `#[test]` functions, files named
`*_tests.rs`), in every crate above and the facade's src/. A function's length runs from the
line of its `fn` to the line of its closing brace; a function nested in another counts in
both. For now this part only reports (each offender with its length) unless
`--enforce-functions` is given, which makes an offender a problem like the others.

No comment line over 100 columns (characters, not bytes) in any `.rs` file the workspace
tracks, tests included: comments wrap as code does. Exempt are what cannot wrap: a Markdown
table row (`//! | ...`), a line inside a fenced code block of a doc comment, and a line that
is one word (a URL).

Prints every circle (a strongly connected set of files, with the lines that make each edge and
its elementary cycles), every file and function over its limit; exits 1 if there is any (a
function only with `--enforce-functions`). `--largest N` prints the N largest functions outside
tests instead, and nothing else. Python 3 stdlib only.
Usage: scripts/check-structure.py [--root DIR] [--max-lines N] [--max-function-lines N]
                                  [--max-comment-width N] [--enforce-functions]
                                  [--largest N]
"""

import argparse
import os
import re
import sys

CRATES = ["proto-codec", "session", "client", "recipes", "testkit", "zkctl", "model",
          "model-server", "sim", "sim-suites"]
SKIPPED_DIRS = {"tests", "benches", "examples", "target", ".git", "fuzz"}
MAX_CYCLES_PER_CIRCLE = 20
# The facade crate's own code, for the function check (its src/ holds the guide besides).
FACADE_SRC = "src"
# Every package of the workspace, for the unsafe-code check ("." is the facade crate).
PACKAGES = CRATES + ["sim", "sim-suites", "."]
# Plain, or under a cfg_attr (client: deny only with the GSSAPI binding).
UNSAFE_ATTR = re.compile(r"^#!\[.*\b(?:forbid|deny)\(unsafe_code\)\)?\]", re.M)

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ITEM_DEF = r"\b(?:fn|struct|enum|trait|type|const|static|union|mod|macro_rules!)\s+{name}\b"


def strip_comments_and_strings(text):
    """The text with comments, strings and char literals blanked out (newlines kept, so line
    numbers stay right)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        raw = re.match(r'b?r(#*)"', text[i:i + 300]) if c in "br" else None
        if raw and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1])):
            end = '"' + raw.group(1)
            j = text.find(end, i + raw.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j + 1]))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.match(r"'(?:\\u\{[0-9A-Fa-f]+\}|\\.|[^\\'\n])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_use_tree(text):
    """The leaves of a use tree: (path segments, bound name); the name is "*" for a glob and
    None for `_`."""
    tokens = re.findall(r"::|[{},*]|" + IDENT, text)
    pos = 0

    def tree(prefix):
        nonlocal pos
        leaves = []
        path = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "::":
                pos += 1
            elif t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    leaves.extend(tree(path))
                pos += 1
                return leaves
            elif t == "*":
                pos += 1
                return leaves + [(path, "*")]
            elif t in (",", "}"):
                break
            elif t == "as":
                alias = tokens[pos + 1] if pos + 1 < len(tokens) else "_"
                pos += 2
                return leaves + [(path, None if alias == "_" else alias)]
            else:
                path.append(t)
                pos += 1
        if path and path != list(prefix):
            name = path[-1]
            if name == "self":
                path = path[:-1]
                name = path[-1] if path else None
            leaves.append((path, name))
        return leaves

    return tree([])


class Crate:
    def __init__(self, name, src):
        self.name = name
        self.src = src
        self.modules = {}  # module path (tuple) -> file
        self.bindings = {}  # module path -> {name: absolute path (tuple) or None if extern}
        self.globs = {}  # module path -> [absolute module path]
        self.refs = []  # (file, line, module path, segments, bound name, use/reexport/code)
        self.texts = {}  # file -> stripped text
        self.find_files()
        self.module_of_file = {f: m for m, f in self.file_modules.items()}
        for module, path in sorted(self.file_modules.items(), key=lambda kv: kv[1]):
            self.scan(path, module)

    def find_files(self):
        self.file_modules = {}
        roots = [os.path.join(self.src, r) for r in ("lib.rs", "main.rs")]
        for root in roots:
            if os.path.exists(root):
                self.file_modules[()] = root
                self.modules[()] = root
                break
        for dirpath, dirnames, filenames in os.walk(self.src):
            dirnames[:] = sorted(d for d in dirnames if d != "bin")
            for f in sorted(filenames):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, self.src)[:-3].split(os.sep)
                if rel in (["lib"], ["main"]):
                    continue
                if rel[-1] == "mod":
                    rel = rel[:-1]
                self.file_modules[tuple(rel)] = path
                self.modules[tuple(rel)] = path

    def scan(self, path, file_module):
        with open(path, encoding="utf-8") as f:
            text = strip_comments_and_strings(f.read())
        self.texts[path] = text
        # Inline modules (`mod tests { … }`): their own module paths, in the same file.
        spans = []  # (start, end, module path)
        stack = []
        depth = 0
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*([{;])|[{}]", text):
            if m.group(1):
                if m.group(2) == "{":
                    parent = stack[-1][2] if stack else file_module
                    module = parent + (m.group(1),)
                    self.modules[module] = path
                    depth += 1
                    stack.append((m.start(), depth, module))
                continue
            if m.group(0) == "{":
                depth += 1
            else:
                if stack and stack[-1][1] == depth:
                    start, _, module = stack.pop()
                    spans.append((start, m.end(), module))
                depth -= 1

        def module_at(offset):
            best = file_module
            best_len = -1
            for start, end, module in spans:
                if start <= offset < end and len(module) > best_len:
                    best, best_len = module, len(module)
            return best

        def line_at(offset):
            return text.count("\n", 0, offset) + 1

        use_re = re.compile(r"(?<![A-Za-z0-9_:])(pub\s*(?:\([^)]*\)\s*)?)?use\s+([^;]*);")
        use_spans = []  # where the `use` items are, so their paths are not read twice
        for m in use_re.finditer(text):
            body = m.group(2)
            if body.lstrip().startswith("<"):
                continue  # `+ use<'a>` (precise capture), not an import
            use_spans.append((m.start(), m.end()))
            module = module_at(m.start())
            for segs, name in parse_use_tree(body):
                if not segs:
                    continue
                kind = "reexport" if m.group(1) else "use"
                self.refs.append((path, line_at(m.start()), module, segs, name, kind))
        # Paths written in the code: `crate::a::b`, `super::x`, `self::y`, `child::z`.
        path_re = re.compile(r"(?<![A-Za-z0-9_:])(" + IDENT + r"(?:\s*::\s*" + IDENT + r")+)")
        for m in path_re.finditer(text):
            if any(s <= m.start() < e for s, e in use_spans):
                continue
            segs = re.split(r"\s*::\s*", m.group(1))
            if segs[0] in ("Self", "std", "core", "alloc"):
                continue
            self.refs.append((path, line_at(m.start()), module_at(m.start()), segs, None, "code"))

    def absolute(self, module, segs):
        """`segs`, written in `module`, as a path from the crate root; None if it leads out of
        the crate (another crate, std, a local name)."""
        segs = list(segs)
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] == "self":
            return module + tuple(segs[1:])
        if segs[0] == "super":
            base = list(module)
            while segs and segs[0] == "super":
                if not base:
                    return None
                base.pop()
                segs.pop(0)
            return tuple(base) + tuple(segs)
        if module + (segs[0],) in self.modules:
            return module + tuple(segs)
        bound = self.bindings.get(module, {}).get(segs[0])
        if bound:
            return bound + tuple(segs[1:])
        return None

    def build_bindings(self):
        for path, _line, module, segs, name, kind in self.refs:
            if kind == "code":
                continue
            target = self.absolute(module, segs) if segs[0] != "" else None
            if name == "*":
                if target is not None:
                    self.globs.setdefault(module, []).append(target)
            elif name is not None:
                self.bindings.setdefault(module, {})[name] = target

    def defines(self, module, name):
        text = self.texts.get(self.modules.get(module, ""), "")
        return re.search(ITEM_DEF.format(name=re.escape(name)), text) is not None

    def resolve(self, segs, depth=0):
        """The file where the item at absolute path `segs` lives (following re-exports)."""
        module = ()
        for i, seg in enumerate(segs):
            if module + (seg,) in self.modules:
                module = module + (seg,)
                continue
            if depth < 16:
                binding = self.bindings.get(module, {})
                if seg in binding:
                    bound = binding[seg]
                    if bound is None:
                        break  # re-exported from another crate: lives here, for us
                    return self.resolve(tuple(bound) + tuple(segs[i + 1:]), depth + 1)
                if not self.defines(module, seg):
                    for glob in self.globs.get(module, []):
                        found = self.resolve(tuple(glob) + tuple(segs[i:]), depth + 1)
                        if found and found != self.modules.get(tuple(glob)):
                            return found
                        if found and self.defines(tuple(glob), seg):
                            return found
            break
        return self.modules.get(module)

    def graph(self):
        """{file: {imported file: [line numbers]}}."""
        self.build_bindings()
        edges = {f: {} for f in self.file_modules.values()}
        for path, line, module, segs, _name, kind in self.refs:
            if not segs or segs[0] == "":
                continue
            target = self.absolute(module, segs)
            if target is None:
                continue
            file_module = self.module_of_file[path]
            if kind == "reexport" and target[: len(file_module)] == file_module:
                # A module publishing its own submodules' items (`pub use child::Item`) is
                # declaring its face, not depending on them; whoever names the item through
                # it is followed on to the child's file.
                continue
            found = self.resolve(target)
            if found and found != path:
                edges[path].setdefault(found, []).append(line)
        return edges


def circles(edges):
    """Strongly connected sets of more than one file (Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def elementary_cycles(edges, component, limit):
    """Up to `limit` simple cycles within one strongly connected set, each from its least file."""
    members = set(component)
    found = []
    for start in component:
        def walk(node, path, seen):
            if len(found) >= limit:
                return
            for nxt in sorted(edges.get(node, {})):
                if nxt not in members or nxt < start:
                    continue
                if nxt == start:
                    found.append(path + [start])
                elif nxt not in seen:
                    seen.add(nxt)
                    walk(nxt, path + [nxt], seen)
                    seen.discard(nxt)

        walk(start, [start], {start})
    return found


def crate_roots(root):
    """Each package's crate roots: src/lib.rs, src/main.rs, src/bin/*.rs."""
    for name in PACKAGES:
        src = os.path.join(root, name, "src")
        for f in ("lib.rs", "main.rs"):
            if os.path.isfile(os.path.join(src, f)):
                yield os.path.join(src, f)
        bins = os.path.join(src, "bin")
        if os.path.isdir(bins):
            for f in sorted(os.listdir(bins)):
                if f.endswith(".rs"):
                    yield os.path.join(bins, f)


FN_ITEM = re.compile(r"\bfn\s+(" + IDENT + r")")
TEST_ATTR = re.compile(r"#\[\s*(?:test\b|cfg\s*\(\s*(?:all\s*\(\s*)?test\b)")


def brace_end(text, i):
    """The offset of the brace that closes the one at `i`."""
    depth = 0
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text) - 1


def body_start(text, i):
    """The offset of the `{` opening the body of the item whose signature starts at `i`, or
    None if the item ends at a `;` first (a declaration without a body) or is a field."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c in ";}" and depth == 0:
            return None  # a declaration, or the end of the enclosing block (a field)
        elif c == "{" and depth == 0:
            return i
        i += 1
    return None


def test_spans(text):
    """Spans of `text` that are tests: an item under `#[test]` or `#[cfg(test)]` (a module,
    a function, an impl)."""
    spans = []
    for m in TEST_ATTR.finditer(text):
        start = body_start(text, attribute_end(text, m.start()))
        if start is not None:
            spans.append((m.start(), brace_end(text, start)))
    return spans


def attribute_end(text, i):
    """The offset just past the `]` closing the attribute that starts (`#[`) at `i`."""
    depth = 0
    while i < len(text):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def functions(path):
    """(length in lines, line, name) of each function with a body in `path`, outside tests."""
    with open(path, encoding="utf-8") as f:
        text = strip_comments_and_strings(f.read())
    skipped = test_spans(text)
    out = []
    for m in FN_ITEM.finditer(text):
        if any(a <= m.start() <= b for a, b in skipped):
            continue
        start = body_start(text, m.end())
        if start is None:
            continue
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, brace_end(text, start)) + 1
        out.append((last - first + 1, first, m.group(1)))
    return out


TEST_MOD_FILE = re.compile(r"#\[\s*cfg\s*\(\s*test\s*\)\s*\](?:\s*#\[[^\]]*\])*\s*"
                           r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;")


def test_module_files(path):
    """The files of the modules `path` declares under `#[cfg(test)]` (`mod tests;`)."""
    with open(path, encoding="utf-8") as f:
        text = strip_comments_and_strings(f.read())
    stem = os.path.basename(path)[:-3]
    here = os.path.dirname(path)
    if stem not in ("mod", "lib", "main"):
        here = os.path.join(here, stem)
    files = set()
    for m in TEST_MOD_FILE.finditer(text):
        for candidate in (m.group(1) + ".rs", os.path.join(m.group(1), "mod.rs")):
            files.add(os.path.normpath(os.path.join(here, candidate)))
    return files


def all_functions(root):
    """(length, relative path, line, name) of every function outside tests, longest first."""
    paths = []
    for name in CRATES + [FACADE_SRC]:
        base = os.path.join(root, name)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            paths.extend(os.path.join(dirpath, f) for f in sorted(filenames)
                         if f.endswith(".rs") and not f.endswith("_tests.rs"))
    tests = set()
    for path in paths:
        tests |= test_module_files(path)
    found = []
    for path in paths:
        if os.path.normpath(path) not in tests:
            rel = os.path.relpath(path, root)
            found.extend((n, rel, line, fn) for n, line, fn in functions(path))
    return sorted(found, key=lambda r: (-r[0], r[1], r[2]))


def count_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


COMMENT = re.compile(r"^\s*//[/!]?\s?(.*)$")


def long_comments(root, width):
    """(file, line, width) of every comment line wider than `width` in the `.rs` files git
    tracks, but for table rows, fenced code in doc comments and one-word lines."""
    import subprocess
    files = subprocess.run(["git", "-C", root, "ls-files", "*.rs"], capture_output=True,
                           text=True, check=True).stdout.split()
    found = []
    for rel in files:
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        fenced = False
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                m = COMMENT.match(line)
                if not m:
                    fenced = False
                    continue
                body = m.group(1)
                if body.lstrip().startswith("```"):
                    fenced = not fenced
                    continue
                if len(line) <= width or fenced or body.lstrip().startswith("|"):
                    continue
                if len(body.split()) <= 1:
                    continue
                found.append((rel, number, len(line)))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--max-lines", type=int, default=800)
    parser.add_argument("--max-function-lines", type=int, default=100)
    parser.add_argument("--max-comment-width", type=int, default=100)
    parser.add_argument("--enforce-functions", action="store_true",
                        help="a function over the limit is a problem (else only reported)")
    parser.add_argument("--largest", type=int, metavar="N",
                        help="print the N largest functions outside tests, and nothing else")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    problems = 0

    if args.largest is not None:
        for n, rel, line, fn in all_functions(root)[: args.largest]:
            print(f"{n:5d} {rel}:{line} {fn}")
        return 0

    for name in CRATES:
        src = os.path.join(root, name, "src")
        if not os.path.isdir(src):
            continue
        crate = Crate(name, src)
        edges = crate.graph()
        rel = lambda p: os.path.relpath(p, root)  # noqa: E731
        for component in circles(edges):
            problems += 1
            print(f"circle in {name}: {', '.join(rel(f) for f in component)}")
            for f in component:
                for g in sorted(edges[f]):
                    if g in component:
                        lines = ",".join(str(n) for n in sorted(set(edges[f][g]))[:6])
                        print(f"  {rel(f)} -> {rel(g)} (line {lines})")
            cycles = elementary_cycles(edges, component, MAX_CYCLES_PER_CIRCLE)
            for cycle in cycles:
                print("  cycle: " + " -> ".join(rel(f) for f in cycle))
            if len(cycles) >= MAX_CYCLES_PER_CIRCLE:
                print(f"  (first {MAX_CYCLES_PER_CIRCLE} cycles shown)")

    for name in CRATES:
        base = os.path.join(root, name)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for f in sorted(filenames):
                if f.endswith(".rs"):
                    path = os.path.join(dirpath, f)
                    lines = count_lines(path)
                    if lines > args.max_lines:
                        problems += 1
                        print(f"too long: {os.path.relpath(path, root)} has {lines} lines "
                              f"(at most {args.max_lines} outside tests/, benches/, examples/)")

    for path in crate_roots(root):
        with open(path, encoding="utf-8") as f:
            if not UNSAFE_ATTR.search(f.read()):
                problems += 1
                print(f"unsafe code allowed: {os.path.relpath(path, root)} has no "
                      "#![forbid(unsafe_code)] (or #![deny(unsafe_code)])")

    for rel, line, width in long_comments(root, args.max_comment_width):
        problems += 1
        print(f"comment too wide: {rel}:{line} is {width} columns "
              f"(at most {args.max_comment_width}; wrap it)")

    long_functions = [r for r in all_functions(root) if r[0] > args.max_function_lines]
    for n, rel, line, fn in long_functions:
        print(f"function too long: {rel}:{line} {fn} has {n} lines "
              f"(at most {args.max_function_lines} outside tests)")
    if long_functions and args.enforce_functions:
        problems += len(long_functions)
    elif long_functions:
        print(f"check-structure: {len(long_functions)} function(s) over "
              f"{args.max_function_lines} lines, reported only (--enforce-functions fails on them)")

    if problems:
        print(f"check-structure: {problems} problem(s)")
        return 1
    functions_said = (f"no function over {args.max_function_lines} lines, "
                      if not long_functions else "")
    print("check-structure: no import circle, no file over "
          f"{args.max_lines} lines, {functions_said}no crate that allows unsafe code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
