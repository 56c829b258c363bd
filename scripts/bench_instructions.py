#!/usr/bin/env python3
"""Marginal instructions per message of the four-stage chain, hflow's and
oneTBB's, under valgrind's callgrind (bench/chain_instructions.cc): each
implementation runs twice, with SMALL and LARGE messages after the same
warm-up, and (Ir(LARGE) - Ir(SMALL)) / (LARGE - SMALL) is its figure, so
start-up, deploy and teardown cancel. Instruction counts, unlike times, do
not move with the machine's load. Writes Google Benchmark-shaped JSON for
scripts/bench_rows.py (field "instructions_per_msg").

Usage: bench_instructions.py BINARY --out FILE [--quick]

Thread-safety: runs one valgrind at a time.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys

COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.M)


def instructions(binary, which, messages):
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         binary, which, str(messages)],
        capture_output=True, text=True, timeout=900)
    m = COLLECTED.search(done.stderr)
    if done.returncode != 0 or m is None:
        sys.exit(f"bench_instructions: {which} with {messages} messages failed "
                 f"(exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is missing (scripts/install-deps installs it)")
    small, large = (200, 1200) if args.quick else (1000, 5000)
    results = []
    for which, name in (("hflow", "IR_Chain4Hflow"), ("tbb", "IR_Chain4Tbb"),
                        ("hflow-ctxcheck", "IR_Chain4HflowCtxcheck")):
        a = instructions(args.binary, which, small)
        b = instructions(args.binary, which, large)
        per = (b - a) / (large - small)
        results.append({"name": name, "run_name": name, "run_type": "iteration",
                        "instructions_per_msg": per, "messages": [small, large],
                        "instructions": [a, b]})
        print(f"{name:<22} {per:10.0f} instructions/message "
              f"({a:,} at {small}, {b:,} at {large})", flush=True)
    with open(args.out, "w") as f:
        json.dump({"benchmarks": results}, f, indent=1)


if __name__ == "__main__":
    main()
