"""Runs each package's test suite in its own pytest process (suites keep their own conftest and
may reuse test file names), then prints one combined closing line and fails if any suite did.

Usage: python ci/run_suites.py SUITE_DIR [SUITE_DIR ...] [-- extra pytest args]"""

from __future__ import annotations

import re
import subprocess
import sys
import time

COUNTS = ("passed", "failed", "skipped", "error", "errors", "xfailed", "xpassed")


def run(suite: str, extra: list[str]) -> tuple[int, dict[str, int]]:
    """Run one suite, streaming its output as it comes; return its exit code and summary counts."""
    print(f"=== {suite}", flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", suite, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    code = proc.wait()
    counts = dict.fromkeys(COUNTS, 0)
    summary = [ln for ln in lines if re.search(r"\d+ (passed|failed|error|skipped)", ln)]
    if summary:
        for n, word in re.findall(r"(\d+) (\w+)", summary[-1]):
            if word in counts:
                counts[word] += int(n)
    print(f"=== {suite}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
    return code, counts


def main(argv: list[str]) -> int:
    """Run every suite and report."""
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    suites = argv[: argv.index("--")] if "--" in argv else argv
    total = dict.fromkeys(COUNTS, 0)
    bad = []
    for suite in suites:
        code, counts = run(suite, extra)
        for k, v in counts.items():
            total[k] += v
        if code not in (0,):
            bad.append(f"{suite} (pytest exit {code})")
    failed = total["failed"] + total["error"] + total["errors"]
    if total["passed"] == 0:
        bad.append("no test passed")
    for b in bad:
        print(f"FAILED SUITE: {b}")
    print(f"all suites: {total['passed']} passed, {failed} failed, {total['skipped']} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
