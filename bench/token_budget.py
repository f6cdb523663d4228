"""Choose the token budget of Jarvis's own reader on the dev sets (never on the held-back ones).

    python bench/token_budget.py                          # report docs/eval/reader/token-budget.md
    python bench/token_budget.py --card jarvis/readers/data/jarvis-minilm-qa/jarvis-reader.json

Every question of the real bed's dev sets (realbed_dev.txt, realbed_dev2-4.txt; questions about held-out pages
left out, as in every fit) is asked as `jarvis ask` asks it (bench/reader_quality.py's ask_all), once per
budget. The rule, fixed before any figure was seen: **the smallest budget whose full F1 is within 0.01 of the
best budget's** (reading less is faster: docs/eval/reader/speed.md). With --card the chosen budget is written
into the reader's card (``token_budget``), which the reader then reads with unless a budget is set.

The confidence model must be refitted after the budget changes (bench/fit_confidence.py): the reader's
scores on fewer passages are not the ones it was fitted on. Asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate  # noqa: E402

from jarvis_lab.bench.reader_quality import ask_all  # noqa: E402
from jarvis.eval.questions import load_questions  # noqa: E402
from jarvis.index import build_index  # noqa: E402
from jarvis.config import Config  # noqa: E402

DEV = ROOT / "eval" / "dev"
DEV_SETS = ("realbed_dev.txt", "realbed_dev2.txt", "realbed_dev3.txt", "realbed_dev4.txt")
BUDGETS = (512, 768, 1024, 1280, 1536)
WITHIN = 0.01
OUT = ROOT / "docs" / "eval" / "reader" / "token-budget.md"


def choose(f1_by_budget: dict[int, float], within: float = WITHIN) -> int:
    """The smallest budget whose F1 is within ``within`` of the best one's."""
    best = max(f1_by_budget.values())
    return min(b for b, f1 in f1_by_budget.items() if f1 >= best - within)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--card", type=Path, help="write the chosen budget into this reader card")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    config = Config.from_env()
    if not config.realbed_pages.is_file():
        print(f"no real bed at {config.realbed_pages}: nothing to choose on", file=sys.stderr)
        return 1
    from jarvis.eval.realbed import heldout_titles, realbed_corpus

    held = heldout_titles(config.realbed_pages)
    questions = {name: [q for q in load_questions(DEV / name) if q.expected_title not in held] for name in DEV_SETS}
    n = sum(len(qs) for qs in questions.values())
    rows, f1s = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        print("indexing the real bed ...", flush=True)
        build_index(realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=False),
                    Path(tmp) / "index", progress=False)
        for budget in args.budgets:
            asked = []
            for name, qs in questions.items():
                asked += ask_all(config, "jarvis", Path(tmp) / "index", qs, name, set(), budget)
            f1s[budget] = sum(a.f1 for a in asked) / len(asked)
            stated = [a for a in asked if a.stated]
            seconds = sorted(a.seconds for a in asked)
            rows.append([budget, len(asked), f"{f1s[budget]:.3f}",
                         f"{sum(a.right for a in stated) / len(stated):.3f}" if stated else "—",
                         f"{len(stated) / len(asked):.3f}", unsure_quotes(asked), f"{statistics.median(seconds):.3f}",
                         f"{seconds[int(0.95 * (len(seconds) - 1))]:.3f}"])
            print(tabulate(rows, headers=HEADERS, tablefmt="github"), flush=True)
    chosen = choose(f1s)
    table = tabulate(rows, headers=HEADERS, tablefmt="github")
    print(f"\nchosen: {chosen} tokens (the smallest budget within {WITHIN} F1 of the best)")
    if args.card:
        card = json.loads(args.card.read_text(encoding="utf-8"))
        card["token_budget"] = chosen
        args.card.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"written into {args.card}")
    if not args.no_write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text("\n".join([
            "# The token budget of Jarvis's own reader, chosen on the dev sets", "",
            "Written by `python bench/token_budget.py`: every question of " + ", ".join(DEV_SETS)
            + f" that is not about a held-out page ({n} questions) asked as `jarvis ask` asks it, once per "
            "budget (the tokens the reader runs a question, question and special tokens of every window "
            "included). Stated right and coverage use the confidence model of the time; seconds are a whole "
            "warm `ask` (retrieval + reader) on the 2-core machine.", "",
            table, "",
            f"Rule, fixed before the figures: the smallest budget within {WITHIN} full F1 of the best. "
            f"**Chosen: {chosen} tokens**; the reader's card carries it (`token_budget`), and a budget set in "
            "the settings file or with `--token-budget` still wins. Held-back figures are in report.md.", ""]),
            encoding="utf-8")
    return 0


HEADERS = ["budget", "questions", "full F1", "stated right", "coverage", "unsure quotes a gold", "ask p50 s",
           "ask p95 s"]


def unsure_quotes(asked) -> str:
    quoted = [a for a in asked if a.quoted]
    return f"{sum(a.quote_holds_gold for a in quoted) / len(quoted):.3f}" if quoted else "—"


if __name__ == "__main__":
    sys.exit(main())
