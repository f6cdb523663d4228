"""Run every benchmark, one after the other (they each want both cores), and print their figures.

    python bench/run_all.py                # all of them
    python bench/run_all.py index reader   # some of them
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
BENCHMARKS = ["crawl", "index", "reader", "ask", "bridge"]


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    failed = []
    for name in names or BENCHMARKS:
        print(f"\n===== bench_{name}.py =====", flush=True)
        if subprocess.call([sys.executable, str(BENCH_DIR / f"bench_{name}.py")]) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
