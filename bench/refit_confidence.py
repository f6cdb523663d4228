"""Fit Jarvis's reader's confidence model on records of the whole pipeline (bench/rerank_weight.py's or
bench/style_sets.py's), by writer, and choose the answer threshold on cross-validated confidences: each
writer's answers judged by a model fitted on the other writers only (docs/eval/retrieval/rules.md, rule 5).
Questions about the real bed's held-out pages are never fitted on (they are dropped from ``--records``).

    python -m jarvis_lab.bench.refit_confidence --records choice.jsonl --configuration 'reranker jarvis, weight 0.5'
        [--judged judged.jsonl ...] [--write jarvis/readers/data/confidence-jarvis-minilm-qa.json]

A yes/no question's answer is right when its verdict is the gold one and its span is right (a reply says
"yes — ..." or "no — ..."). Prints, by writer and by shape, how often stated answers are right against what
the confidence says, on the fit's own cross-validated confidences and (``--judged``) on records held back
from the fit, and the calibration of each in bins of 0.1. Asserts nothing.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict

from tabulate import tabulate

from pathlib import Path

from jarvis.eval.calibration import Observation, choose_threshold, cross_validated, fit
from jarvis.eval.realbed import heldout_titles

PAGES = Path(__file__).resolve().parent.parent.parent / "shared" / "realwiki" / "pages.json.gz"


def right(record: dict) -> bool:
    if record.get("verdict") and record.get("said"):
        return bool(record["right"]) and record["said"] == record["verdict"]
    return bool(record["right"])


def observations(records: list[dict]) -> list[Observation]:
    """One observation a record; the set name carries its writer (``writer_of`` reads the part before "_")."""
    return [Observation(f"{r['writer']}_{r['style']}", i, r["question"], r["expected"], r["answer"],
                        r["answer_title"], r["signals"] if r["answer"] else {}, r["f1"], right(r),
                        r["points_to_expected"]) for i, r in enumerate(records)]


def table(records: list[dict], confidence: list[float], threshold: float, key: str) -> str:
    groups: dict[str, list[tuple[dict, float]]] = defaultdict(list)
    for r, c in zip(records, confidence):
        groups[str(r[key])].append((r, c))
        groups["all"].append((r, c))
    rows = []
    for name, pairs in sorted(groups.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        stated = [(r, c) for r, c in pairs if r["answer"] and c >= threshold]
        rows.append([name, len(pairs), round(len(stated) / len(pairs), 3),
                     round(sum(right(r) for r, _ in stated) / len(stated), 3) if stated else "-",
                     round(sum(c for _, c in stated) / len(stated), 3) if stated else "-",
                     round(sum(r["f1"] for r, _ in pairs) / len(pairs), 3)])
    return tabulate(rows, headers=[key, "n", "coverage", "stated right", "confidence says", "full F1"],
                    tablefmt="github")


def calibration_bins(records: list[dict], confidence: list[float], width: float = 0.1) -> str:
    """Every answer with text by its confidence, in bins of ``width``: how often right against what the
    confidence says (issue 47: no bin of 15 or more answers off by more than 0.15)."""
    bins: dict[int, list[tuple[dict, float]]] = defaultdict(list)
    for r, c in zip(records, confidence):
        if r["answer"]:
            bins[min(int(c / width), round(1 / width) - 1)].append((r, c))
    rows = []
    for b, pairs in sorted(bins.items()):
        said = sum(c for _, c in pairs) / len(pairs)
        rate = sum(right(r) for r, _ in pairs) / len(pairs)
        rows.append([f"{b * width:.1f}-{(b + 1) * width:.1f}", len(pairs), round(said, 3), round(rate, 3),
                     round(rate - said, 3), "off" if len(pairs) >= 15 and abs(rate - said) > 0.15 else ""])
    return tabulate(rows, headers=["confidence", "n", "says", "right", "gap", ""], tablefmt="github")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", nargs="+", required=True, help="the fit's records (choice sets)")
    parser.add_argument("--configuration", help="only the records of this configuration")
    parser.add_argument("--judged", nargs="*", default=[], help="records held back from the fit, judged only")
    parser.add_argument("--precision", type=float, default=0.8)
    parser.add_argument("--reader", default="jarvis-minilm-qa+int8")
    parser.add_argument("--write", help="where to write the fitted model (default: nowhere)")
    args = parser.parse_args()
    records = [json.loads(line) for path in args.records for line in open(path, encoding="utf-8")]
    if args.configuration:
        records = [r for r in records if r.get("configuration") == args.configuration]
    held = {t.casefold() for t in heldout_titles(PAGES)} if PAGES.is_file() else set()
    dropped = [r for r in records if r["expected"].casefold() in held]
    records = [r for r in records if r["expected"].casefold() not in held]   # no fit learns from them
    print(f"{len(records)} records fitted on; {len(dropped)} about held-out pages left out")
    fitted = observations(records)
    held_out = cross_validated(fitted, args.reader, by_writer=True)
    threshold = choose_threshold(fitted, held_out, args.precision)
    sets = sorted({r["set"] for r in records})
    model = fit(fitted, args.reader, description=f"fitted by bench/refit_confidence.py on {', '.join(sets)} "
                f"({args.configuration or 'all records'})", by_writer=True, sets=sets,
                cross_validated="by writer", threshold=threshold, target_precision=args.precision)
    print(f"threshold {threshold:.3f} (stated answers {args.precision:.0%} right on cross-validated confidences)")
    for key in ("writer", "style"):
        print("\nfit, cross-validated by writer\n" + table(records, held_out, threshold, key))
    print("\nfit, cross-validated by writer: calibration\n" + calibration_bins(records, held_out))
    if args.judged:
        judged = [json.loads(line) for path in args.judged for line in open(path, encoding="utf-8")]
        confidence = [model.predict(r["signals"]) if r["answer"] else 0.0 for r in judged]
        for key in ("writer", "style"):
            print("\nheld back from the fit\n" + table(judged, confidence, threshold, key))
        print("\nheld back from the fit: calibration\n" + calibration_bins(judged, confidence))
    if args.write:
        print("written", model.save(args.write))


if __name__ == "__main__":
    main()
