"""Runs rclpy's own test suite against kairos, with only the imports mapped.

    python3 crates/kairos-py/conformance/run.py RCLPY_CHECKOUT [--timeout S] [--only FILE...]

``RCLPY_CHECKOUT`` is a checkout of ros2/rclpy (its ``rclpy/test`` is what runs). Each
test file runs in its own ``python -m kairos.run -m pytest`` (``rclpy`` and the interface
packages resolve to kairos, nothing else changes), bounded by ``--timeout`` seconds, and
the per-file counts come from pytest's JUnit report. It prints a Markdown table (file,
tests, passed, failed, errors, skipped, and the first error of a file that did not run)
and the totals; CONFORMANCE.md keeps the last measured table.

kairos must be importable (PYTHONPATH pointing at a staged build, as scripts/test makes).
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET


def run_file(path, timeout, workdir):
    report = pathlib.Path(workdir) / (path.stem + ".xml")
    args = [sys.executable, "-m", "kairos.run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            f"--junitxml={report}", "-o", "junit_family=xunit2", str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # What rclpy/test/__init__.py imports besides rclpy: rpyutils (it only adds Windows
    # DLL directories) and test_rclpy (an empty package CMake makes for C test helpers).
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__file__).parent / "shims")] + env.get("PYTHONPATH", "").split(os.pathsep))
    started = time.monotonic()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=path.parent)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        output = f"E timed out after {timeout:.0f} s (killed)"
    elapsed = time.monotonic() - started
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.exists():
        try:
            suite = ET.parse(report).getroot()
            suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
            for key in counts:
                counts[key] = int(suite.get(key, 0))
        except ET.ParseError:
            pass
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    note = ""
    if passed <= 0 or "timed out" in output[:40]:
        lines = [line[2:].strip() for line in output.splitlines()
                 if line.startswith("E ") or "timed out" in line]
        lines = lines or output.strip().splitlines()[-1:] or [""]
        note = lines[0][:120]
    return dict(counts, passed=passed, elapsed=elapsed, note=note)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=pathlib.Path)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    tests = sorted((args.checkout / "rclpy" / "test").glob("test_*.py"))
    if args.only:
        tests = [t for t in tests if t.name in args.only]
    if not tests:
        sys.exit(f"no rclpy/test/test_*.py under {args.checkout}: give a ros2/rclpy checkout")
    totals = {"tests": 0, "passed": 0, "failures": 0, "errors": 0, "skipped": 0}
    print("| file | tests | passed | failed | errors | skipped | why none ran |")
    print("|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as workdir:
        for test in tests:
            r = run_file(test, args.timeout, workdir)
            for key in totals:
                totals[key] += r[key]
            note = r["note"].replace("|", "\\|")
            print(f"| {test.name} | {r['tests']} | {r['passed']} | {r['failures']} | "
                  f"{r['errors']} | {r['skipped']} | {note} |", flush=True)
    print(f"| **total** | {totals['tests']} | {totals['passed']} | {totals['failures']} | "
          f"{totals['errors']} | {totals['skipped']} | |")


if __name__ == "__main__":
    main()
