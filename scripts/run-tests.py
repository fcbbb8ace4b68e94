#!/usr/bin/env python3
"""Builds the workspace's test binaries once and runs them, several at a time.

    scripts/run-tests.py [--jobs N] [--only REGEX] [--skip REGEX] [--results FILE]
                         [CARGO_TEST_ARGS...]

`cargo test` runs its test binaries one after another. Most of ours spend their time waiting
on ZooKeeper servers, Java peers and fault timers rather than on the CPU, so the suite's wall
time was the sum of those waits. This runner asks cargo for the binaries
(`cargo test --no-run --message-format=json`), then runs them as cargo would (the package's
folder as working directory, cargo's CARGO_* variables), `--jobs` at a time (default 2),
the slowest first (target/test-durations.txt, written by the last complete run here, else the
committed scripts/test-durations.txt; binaries neither knows start first, so a new slow test is
never left for last).

Each binary's output is kept and printed only when it fails; a line per binary says how it
went and how long it took. Every binary runs even after a failure; the exit status is 1 if any
failed. The tests must pass side by side anyway: the suite has to pass on a busy machine, and
the test kit's ports and scratch folders are safe across processes.

`--only` and `--skip` keep the binaries whose name (`client:test:operations`) the regular
expression finds, or does not; `--results FILE` writes a JSON line per binary (its name, exit
status, seconds, and the tests it passed, failed and ignored, from libtest's summaries), which
scripts/test-versions.sh collects into the compatibility table.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The order to start binaries in: the last full run's times on this machine if there is one,
# else the committed figures (copy target/test-durations.txt over them when the suite changes).
DURATIONS = [ROOT / "target" / "test-durations.txt", ROOT / "scripts" / "test-durations.txt"]


def build(cargo_args):
    """Builds the test binaries; returns [(name, executable, package folder, package)]."""
    command = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"run-tests: `{' '.join(command)}` failed")
    binaries = []
    for line in proc.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message["profile"]["test"] and "bench" not in message["target"]["kind"]:
            continue  # examples and binaries are built, not run, as cargo test does
        package = message["package_id"]
        manifest = Path(message["manifest_path"])
        kind = message["target"]["kind"][0]
        name = f"{manifest.parent.relative_to(ROOT).as_posix() or '.'}:{kind}:{message['target']['name']}"
        binaries.append((name, message["executable"], manifest.parent, package, kind))
    return binaries


def package_env(folder, package_id):
    """The variables cargo sets for a test it runs (those a test may read at run time)."""
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = str(folder)
    # package_id: "path+file:///work/main/client#zkrs-client@0.1.0" (or the older form).
    tail = package_id.split("#")[-1]
    if "@" in tail:
        name, version = tail.split("@", 1)
    else:
        name, version = Path(package_id.split(" ")[0]).name, tail
    env["CARGO_PKG_NAME"] = name
    env["CARGO_PKG_VERSION"] = version
    env.setdefault("CARGO", "cargo")
    return env


def load_durations():
    durations = {}
    source = next((p for p in DURATIONS if p.exists()), None)
    if source is not None:
        for line in source.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2:
                durations[parts[1]] = float(parts[0])
    return durations


SUMMARY = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)


def test_counts(output):
    """(passed, failed, ignored) summed over libtest's summary lines in a binary's output."""
    totals = [0, 0, 0]
    for match in SUMMARY.finditer(output):
        for i in range(3):
            totals[i] += int(match.group(i + 1))
    return tuple(totals)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="run only the binaries whose name this finds")
    parser.add_argument("--skip", help="leave out the binaries whose name this finds")
    parser.add_argument("--results", help="write a JSON line per binary here")
    args, cargo_args = parser.parse_known_args()

    binaries = build(cargo_args)
    if args.only:
        binaries = [b for b in binaries if re.search(args.only, b[0])]
    if args.skip:
        binaries = [b for b in binaries if not re.search(args.skip, b[0])]
    if not binaries:
        sys.exit("run-tests: no test binary left to run")
    known = load_durations()
    # Unknown binaries first (they may be slow), then the slowest known ones.
    binaries.sort(key=lambda b: -known.get(b[0], float("inf")))

    lock = threading.Lock()
    queue = list(binaries)
    results = {}
    counts = {}
    started = time.monotonic()

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                name, executable, folder, package, kind = queue.pop(0)
            begin = time.monotonic()
            # Criterion's benches (harness = false) run each benchmark once when not given
            # `--bench`, as under `cargo test`.
            proc = subprocess.run(
                [executable],
                cwd=folder,
                env=package_env(folder, package),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            seconds = time.monotonic() - begin
            with lock:
                results[name] = (proc.returncode, seconds)
                counts[name] = test_counts(proc.stdout.decode("utf-8", "replace"))
                verdict = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
                print(f"{verdict:<8} {seconds:7.1f} s  {name}", flush=True)
                if proc.returncode != 0:
                    sys.stdout.write(proc.stdout.decode("utf-8", "replace"))
                    print(f"---- end of {name}", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    if args.results:
        with open(args.results, "w") as out:
            for name, (code, seconds) in sorted(results.items()):
                passed, failed_tests, ignored = counts[name]
                out.write(json.dumps({"binary": name, "exit": code, "seconds": round(seconds, 1),
                                      "passed": passed, "failed": failed_tests,
                                      "ignored": ignored}) + "\n")
    failed = sorted(name for name, (code, _) in results.items() if code != 0)
    total = time.monotonic() - started
    print(f"run-tests: {len(results)} binaries in {total:.0f} s, {args.jobs} at a time;"
          f" the sum of their times {sum(s for _, s in results.values()):.0f} s")
    if not failed:
        # Only a complete, passing run of the whole suite records the order for the next one.
        if "--workspace" in cargo_args and "--all-targets" in cargo_args:
            lines = sorted((f"{s:.1f} {n}" for n, (_, s) in results.items()),
                           key=lambda l: -float(l.split()[0]))
            DURATIONS[0].parent.mkdir(exist_ok=True)
            DURATIONS[0].write_text("\n".join(lines) + "\n")
        return 0
    print("run-tests: failed: " + ", ".join(failed))
    return 1


if __name__ == "__main__":
    sys.exit(main())
