"""How often the desk's "likely wrong" flag is right, on an eval run's per-question records.

    python bench/likely_wrong.py docs/eval/realbed/results.json [--below 0.75]

For every full-system configuration of the run (``per_question["full:..."]``): the stated answers, how many
the flag marks (confidence below ``--below``), the share of those that are wrong (precision) against the share
of all stated answers that are wrong (base rate), and the share of the wrong ones it marks (recall); with the
cut-offs around it, to choose [panel] likely_wrong_below.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jarvis.panel.log_view import flag_precision


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.json written by jarvis eval --json")
    parser.add_argument("--below", type=float, default=0.75)
    args = parser.parse_args()
    for path in args.results:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for name, records in data.get("per_question", {}).items():
            if not name.startswith("full:") or not any("right_if_stated" in r for r in records):
                continue
            print(f"{path} {name}")
            for below in sorted({args.below, 0.6, 0.65, 0.7, 0.75, 0.8}):
                m = flag_precision(records, below)
                if m["stated"] == 0 or m["flagged"] == 0:
                    continue
                mark = "  <-" if below == args.below else ""
                print(f"  below {below:.2f}: {m['flagged']:3d} of {m['stated']:3d} stated flagged; "
                      f"{m['precision']:.0%} of them wrong (all stated: {m['base_rate']:.0%}); "
                      f"{m['recall']:.0%} of the wrong ones flagged{mark}" if m["recall"] is not None else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
