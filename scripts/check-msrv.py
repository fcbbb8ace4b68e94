#!/usr/bin/env python3
"""Checks each workspace crate's declared `rust-version` against its dependencies': fails when
any package of a crate's normal tree (its normal and build dependencies, transitively; not its
dev-dependencies) declares a newer `rust-version` than the crate itself.

Reads `cargo metadata --format-version 1` (the lock file's resolved versions and each one's
`rust_version`). The resolve is the workspace's, features unified across its members, so a
crate's tree here may hold an optional dependency another member turns on: the check errs on
the side of a higher requirement. Prints, per crate, what it declares and the newest its tree
needs (and which package needs it); exits 1 on any crate that declares less.
Python 3 stdlib only. Usage: scripts/check-msrv.py [--manifest-path Cargo.toml]
"""

import argparse
import json
import subprocess
import sys


def version(text):
    """`1.85` or `1.85.1` as a comparable tuple; None for no version."""
    if not text:
        return None
    return tuple(int(p) for p in text.split("."))


def shown(v):
    return ".".join(str(p) for p in v) if v else "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest-path", default=None)
    args = parser.parse_args()
    cmd = ["cargo", "metadata", "--format-version", "1", "--locked"]
    if args.manifest_path:
        cmd += ["--manifest-path", args.manifest_path]
    meta = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

    def normal_deps(node_id):
        for dep in nodes[node_id]["deps"]:
            kinds = {k["kind"] for k in dep.get("dep_kinds", [])}
            if kinds & {None, "build"}:
                yield dep["pkg"]

    problems = 0
    for member in sorted(meta["workspace_members"], key=lambda i: packages[i]["name"]):
        package = packages[member]
        declared = version(package.get("rust_version"))
        needed, by = None, None
        seen, stack = {member}, [member]
        while stack:
            for dep in normal_deps(stack.pop()):
                if dep in seen:
                    continue
                seen.add(dep)
                stack.append(dep)
                v = version(packages[dep].get("rust_version"))
                if v and (needed is None or v > needed):
                    needed, by = v, packages[dep]
        ok = needed is None or (declared is not None and declared >= needed)
        blame = f" ({by['name']} {by['version']})" if by else ""
        print(f"{'ok ' if ok else 'BAD'} {package['name']}: declares {shown(declared)}, "
              f"its tree needs {shown(needed)}{blame}")
        problems += not ok
    if problems:
        print(f"check-msrv: {problems} crate(s) declare an older Rust than their dependencies need")
        return 1
    print("check-msrv: every crate declares at least what its dependencies need")
    return 0


if __name__ == "__main__":
    sys.exit(main())
