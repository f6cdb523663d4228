"""The paraphrase threshold of taught answers (jarvis.taught.PARAPHRASE_THRESHOLD), chosen and checked on
questions written for it.

    python bench/taught_threshold.py [--pairs eval/dev/taught_paraphrases.txt] [--index DIR] [--part chosen]

Each pair of eval/dev/taught_paraphrases.txt is a question taught and one asked after, marked whether they ask
the same thing. Every pair is read as one index reads it (the index's spelling; default: the bundled corpus's
index, built in a temporary folder) and scored as the matcher scores it. The rule, fixed before any score was
seen: the threshold is the lowest on a 0.05 grid at which no "no" pair of the chosen part matches. Printed: for
each part, how many "yes" pairs match (and how: by their words, their spelling or as a paraphrase), how many
"no" pairs match, and the pairs on the wrong side.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from jarvis.config import BUNDLED_CORPUS
from jarvis.taught import PARAPHRASE_THRESHOLD, TaughtAnswer, TaughtMatcher

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "eval" / "dev" / "taught_paraphrases.txt"
GRID = [round(0.5 + 0.05 * i, 2) for i in range(11)]


def read_pairs(path: Path) -> list[tuple[str, str, str, bool]]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        part, taught, asked, same = line.split("|")
        pairs.append((part, taught, asked, same.strip() == "yes"))
    return pairs


def scored(pairs, index, known) -> list[tuple[str, str, str, bool, str, float]]:
    """(part, taught, asked, same, how it matched at threshold 0, its overlap) for each pair."""
    rows = []
    for part, taught, asked, same in pairs:
        answer = TaughtAnswer("x", taught, "an answer", "A title", "", "", Path("x.md"))
        matcher = TaughtMatcher([answer], index, threshold=0.0, known=known)
        found = matcher.match(asked)
        rows.append((part, taught, asked, same, found.how if found else "none", found.score if found else 0.0))
    return rows


def choose(rows) -> float:
    """The lowest grid threshold at which no "no" pair of the rows matches."""
    for threshold in GRID:
        if not any(not same and score >= threshold for _, _, _, same, _, score in rows):
            return threshold
    return 1.0


def report(rows, threshold: float, title: str) -> None:
    yes = [r for r in rows if r[3]]
    no = [r for r in rows if not r[3]]
    hit = [r for r in yes if r[5] >= threshold]
    how = {kind: sum(r[4] == kind and r[5] >= threshold for r in yes) for kind in ("words", "spelling", "paraphrase")}
    false = [r for r in no if r[5] >= threshold]
    print(f"{title}: {len(hit)} of {len(yes)} same questions matched ({how['words']} by their words, "
          f"{how['spelling']} by their spelling, {how['paraphrase']} as paraphrases); "
          f"{len(false)} of {len(no)} other questions matched")
    for r in sorted(yes, key=lambda r: r[5]):
        if r[5] < threshold:
            print(f"    missed  {r[5]:.3f}  {r[1]!r} ~ {r[2]!r}")
    for r in false:
        print(f"    FALSE   {r[5]:.3f}  {r[1]!r} ~ {r[2]!r}")
    closest = max((r[5] for r in no), default=0.0)
    print(f"    closest other question: {closest:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--index", type=Path, default=None, help="an index to read the questions with")
    parser.add_argument("--part", choices=("chosen", "held", "both"), default="both",
                        help="which part to score (chosen alone while developing: the held-back part once)")
    args = parser.parse_args()
    from jarvis.index import Searcher, build_index
    from jarvis.index.layout import IndexDir
    from jarvis.index.spelling import Vocabulary

    with tempfile.TemporaryDirectory() as tmp:
        index_dir = args.index
        if index_dir is None:
            index_dir = Path(tmp) / "index"
            build_index(BUNDLED_CORPUS, index_dir, profile="tuned", progress=False)
        known = Vocabulary.load(IndexDir(index_dir).live().path)
        with Searcher(index_dir) as searcher:
            rows = scored(read_pairs(args.pairs), searcher.snapshot(), known)
    chosen = [r for r in rows if r[0] == "chosen"]
    threshold = choose(chosen)
    print(f"threshold by the rule: {threshold:.2f} (jarvis.taught.PARAPHRASE_THRESHOLD: {PARAPHRASE_THRESHOLD:.2f})")
    report(chosen, PARAPHRASE_THRESHOLD, "chosen part")
    if args.part != "chosen":
        report([r for r in rows if r[0] == "held"], PARAPHRASE_THRESHOLD, "held-back part")
    return 0


if __name__ == "__main__":
    sys.exit(main())
