#!/usr/bin/env python3
"""The compatibility table: README's section written from the matrix's own results.

    scripts/compat-table.py --collect DIR OUT     DIR's <kind>-<version>.jsonl into OUT
    scripts/compat-table.py --summary DIR NAME..  a table of those runs, on stdout
    scripts/compat-table.py --write               README's section from docs/compatibility.jsonl
    scripts/compat-table.py --check               exit 1 if README's section is not that

scripts/test-versions.sh writes a JSON line per test binary and version
(target/versions/zookeeper-3.9.5.jsonl: binary, exit, seconds, passed, failed, ignored); a
whole run collects them into docs/compatibility.jsonl with the commit and the date, which is
committed. README's table between the markers below is rendered from that file only, never
by hand, and CI checks that it still is (--check).
"""

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "compatibility.jsonl"
README = ROOT / "README.md"
BEGIN = "<!-- compatibility table: scripts/compat-table.py --write; do not edit by hand -->"
END = "<!-- end of compatibility table -->"

# Areas of the suite: (column, the binaries' name prefix or exact name).
SERVER_AREAS = [
    ("client", "client:test:"),
    ("recipes", "recipes:test:"),
    ("Curator interop", ".:test:curator_"),
    ("test kit", "testkit:test:"),
]
# What a user asks of a server version, and the binary that answers: (feature, binary, the
# first line that has it or None when every line does, what the binary checks before it).
FEATURES = [
    ("operations, watches, multi", "client:test:operations", None, None),
    ("getEphemerals, getAllChildrenNumber, multiRead", "client:test:operations", (3, 6),
     "clear error (needs 3.6)"),
    ("whoAmI", "client:test:operations", (3, 7), "clear error (needs 3.7)"),
    ("reconnect, session resume", "client:test:resume", None, None),
    ("persistent, recursive watches", "recipes:test:persistent_watcher", (3, 6),
     "clear error (needs 3.6)"),
    ("CuratorCache", "recipes:test:cache", (3, 6), "one-shot watches"),
    ("TLS", "client:test:tls", None, None),
    ("SASL DIGEST-MD5", "client:test:sasl", None, None),
    ("SASL Kerberos", "client:test:sasl_kerberos", None, None),
    ("reconfig", "client:test:reconfig", None, None),
    ("read-only mode", "client:test:read_only", None, None),
]
# Debian's package is 3.8.0.
DEBIAN = "3.8.0"


def read_runs(folder):
    """{(kind, version): [line...]} from a folder of <kind>-<version>.jsonl."""
    runs = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        kind, _, version = path.stem.partition("-")
        runs[(kind, version)] = [json.loads(l) for l in path.read_text().splitlines() if l]
    return runs


def line_of(version):
    number = DEBIAN if version == "debian" else version
    try:
        return tuple(int(p) for p in number.split(".")[:3])
    except ValueError:
        return (0, 0, 0)


def label(version):
    return f"{DEBIAN} (Debian)" if version == "debian" else version


def area_cell(lines, prefix):
    chosen = [l for l in lines if l["binary"] == prefix or (prefix.endswith(":") or prefix.endswith("_")) and l["binary"].startswith(prefix)]
    if not chosen:
        return "not run"
    passed = sum(l["passed"] for l in chosen)
    failed = sum(l["failed"] for l in chosen)
    crashed = sum(1 for l in chosen if l["exit"] != 0 and l["failed"] == 0)
    seconds = sum(l["seconds"] for l in chosen)
    if failed or crashed:
        return f"**{failed + crashed} failed**, {passed} passed ({seconds:.0f} s)"
    return f"{passed} passed ({seconds:.0f} s)"


def feature_cell(lines, binary, since, before, version):
    found = [l for l in lines if l["binary"] == binary]
    if not found:
        return "not run"
    l = found[0]
    if l["exit"] != 0:
        return "**fails**"
    if since and line_of(version)[:2] < since:
        return before
    return "yes"


def render(results):
    runs = {}
    for r in results:
        runs.setdefault((r["kind"], r["version"]), []).append(r)
    zookeepers = sorted((v for k, v in runs if k == "zookeeper"), key=line_of)
    curators = sorted((v for k, v in runs if k == "curator"), key=line_of)
    meta = results[0]
    out = [BEGIN, ""]
    out.append(f"Tested on {meta['date']} by `scripts/test-versions.sh` (tests passed per area, "
               "with the seconds they took; the commit each ran on):")
    out.append("")
    out.append("| ZooKeeper | " + " | ".join(a for a, _ in SERVER_AREAS) + " | commit |")
    out.append("|---|" + "---|" * (len(SERVER_AREAS) + 1))
    for v in zookeepers:
        lines = runs[("zookeeper", v)]
        out.append(f"| {label(v)} | " + " | ".join(area_cell(lines, p) for _, p in SERVER_AREAS)
                   + f" | {lines[0]['commit']} |")
    out.append("")
    out.append("| feature | " + " | ".join(label(v) for v in zookeepers) + " |")
    out.append("|---|" + "---|" * len(zookeepers))
    for feature, binary, since, before in FEATURES:
        cells = [feature_cell(runs[("zookeeper", v)], binary, since, before, v)
                 for v in zookeepers]
        out.append(f"| {feature} | " + " | ".join(cells) + " |")
    if curators:
        out.append("")
        out.append("| Curator (on 3.9.5) | Curator interop (both directions, same znodes, "
                   "under faults) | queue peers | commit |")
        out.append("|---|---|---|---|")
        for v in curators:
            lines = runs[("curator", v)]
            out.append(f"| {v} | {area_cell(lines, '.:test:curator_')} | "
                       f"{area_cell(lines, 'recipes:test:queue')} | {lines[0]['commit']} |")
    out.append("")
    out.append(END)
    return "\n".join(out)


def readme_with(table):
    text = README.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        sys.exit(f"compat-table: README.md has no section between {BEGIN!r} and {END!r}")
    return text[:start] + table + text[end + len(END):]


def main(argv):
    if argv[:1] == ["--collect"] and len(argv) == 3:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip() or "unknown"
        date = time.strftime("%Y-%m-%d")
        with open(argv[2], "w") as out:
            for (kind, version), lines in sorted(read_runs(argv[1]).items()):
                sidecar = Path(argv[1]) / f"{kind}-{version}.commit"
                commit = sidecar.read_text().strip() if sidecar.exists() else head
                for l in lines:
                    out.write(json.dumps({"kind": kind, "version": version, "commit": commit,
                                          "date": date, **l}) + "\n")
        return 0
    if argv[:1] == ["--summary"] and len(argv) >= 2:
        runs = read_runs(argv[1])
        wanted = argv[2:] or [f"{k}-{v}" for k, v in runs]
        for name in wanted:
            kind, _, version = name.partition("-")
            lines = runs.get((kind, version), [])
            cells = ", ".join(f"{a}: {area_cell(lines, p)}" for a, p in SERVER_AREAS
                              if area_cell(lines, p) != "not run")
            print(f"{kind} {label(version)}: {cells or 'not run'}")
        return 0
    if argv in (["--write"], ["--check"]):
        results = [json.loads(l) for l in RESULTS.read_text().splitlines() if l]
        wanted = readme_with(render(results))
        if argv == ["--write"]:
            README.write_text(wanted)
            return 0
        if README.read_text() != wanted:
            print("compat-table: README.md's compatibility table is not the one "
                  "docs/compatibility.jsonl gives: run scripts/compat-table.py --write")
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
