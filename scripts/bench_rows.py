#!/usr/bin/env python3
"""Turns Google Benchmark JSON (median aggregates) into FORMATS.md rows:
{"name","unit","hflow","baseline","baseline_value","ratio","better"}.
Each row pairs an hflow benchmark with a baseline from the same run."""
import json
import sys

# hflow benchmark -> (baseline benchmark, what the baseline is)
PAIRS = {
    "BM_GuardUnchanged": ("BM_EmptyCall", "non-inlined empty call"),
    "BM_SetDeviceAlreadyBound": ("BM_GetCurrentContext",
                                 "rt::GetCurrentContext"),
}


def main(path):
    data = json.load(open(path))
    med = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            med[b["run_name"]] = b["real_time"]
    rows = []
    for name, (base, what) in PAIRS.items():
        if name in med and base in med:
            rows.append({"name": name, "unit": "ns", "hflow": med[name],
                         "baseline": what, "baseline_value": med[base],
                         "ratio": med[name] / med[base], "better": "lower"})
    json.dump(rows, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
