"""Jarvis's own reader against the sentence reader, on the question sets held back from every fit.

    python bench/reader_quality.py                     # both readers, every held-back set, report written
    python bench/reader_quality.py --reader jarvis --sets realbed_dev5.txt

Each question is asked as `jarvis ask` asks it (jarvis.assembly.assemble: retrieval, the reader, its fitted
confidence and answer threshold), on the index of its wiki. Per reader and set:

- **full F1**: SQuAD F1 of the best span against the gold answers (stated or not);
- **stated right**: the share of stated answers that are right as a player reads them (eval.metrics.is_right);
- **coverage**: the share of questions whose answer is stated;
- **unsure quotes a gold**: of the "not sure" replies that quote a sentence, the share whose sentence holds
  a gold answer (the answer is where Jarvis points);
- and, on the real bed, the questions about held-out pages (never trained or fitted on) against the rest.

Writes docs/eval/reader/report.md (the table) and chart.png. Asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate  # noqa: E402

from jarvis.eval.metrics import best_f1, normalize_answer, right_if_stated  # noqa: E402
from jarvis.eval.questions import load_questions  # noqa: E402
from jarvis.index import build_index  # noqa: E402
from jarvis.assembly import assemble  # noqa: E402
from jarvis.config import Config  # noqa: E402

DEV = ROOT / "eval" / "dev"
OUT = ROOT / "docs" / "eval" / "reader"
READERS = {"jarvis": "Jarvis's own reader", "fallback:minilm": "sentence reader"}


@dataclass(frozen=True)
class Asked:
    set_name: str
    title: str
    held_out: bool
    f1: float
    stated: bool
    right: bool
    quoted: bool          # a "not sure" reply with a quoted sentence
    quote_holds_gold: bool
    seconds: float


def holds(sentence: str, golds) -> bool:
    text = f" {normalize_answer(sentence)} "
    return any(f" {normalize_answer(g)} " in text for g in golds if normalize_answer(g))


def ask_all(config: Config, reader: str, index_dir: Path, questions, set_name: str, held: set[str],
            token_budget: int | None = None) -> list[Asked]:
    from dataclasses import replace

    settings = replace(config.reader, reader=reader, cache_size=0)
    if token_budget is not None:
        settings = replace(settings, token_budget=token_budget)
    out = []
    with assemble(config, index_dir, settings=settings) as jarvis:
        for q in questions:
            answer = jarvis.ask(q.text)
            stated = answer.found and not answer.abstained
            quoted = not stated and bool(answer.sentence)
            out.append(Asked(set_name, q.expected_title, q.expected_title in held, best_f1(answer.text, q.answers),
                             stated, stated and right_if_stated(answer, q.answers), quoted,
                             quoted and holds(answer.sentence, q.answers), answer.seconds))
    return out


def row(name: str, reader: str, asked: list[Asked]) -> list:
    n = len(asked)
    stated = [a for a in asked if a.stated]
    quoted = [a for a in asked if a.quoted]
    return [name, READERS.get(reader, reader), n, f"{sum(a.f1 for a in asked) / n:.3f}",
            f"{sum(a.right for a in stated) / len(stated):.3f}" if stated else "—", f"{len(stated) / n:.3f}",
            f"{sum(a.quote_holds_gold for a in quoted) / len(quoted):.3f}" if quoted else "—"]


HEADERS = ["questions", "reader", "n", "full F1", "stated right", "coverage", "unsure quotes a gold"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", action="append", choices=list(READERS), help="default: both")
    parser.add_argument("--sets", nargs="*", help="question files under eval/dev (default: the held-back ones)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--token-budget", type=int, help="tokens read a question (default: the setting's)")
    args = parser.parse_args()
    config = Config.from_env()
    from jarvis.eval.realbed import heldout_titles, realbed_corpus

    held = heldout_titles(config.realbed_pages)
    beds = [("sample wiki", config.bundled_corpus, [ROOT / "eval" / "questions.txt"])]
    if config.realbed_pages.is_file():
        beds.append(("real bed", realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=False),
                     [DEV / "realbed_dev5.txt", DEV / "realbed_heldout.txt"]))
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for number, (wiki, corpus, sets) in enumerate(beds):
            sets = [s for s in sets if not args.sets or s.name in args.sets]
            if not sets:
                continue
            index_dir = Path(tmp) / f"index-{number}"
            print(f"indexing the {wiki} ...", flush=True)
            build_index(corpus, index_dir, progress=False)
            for reader in args.reader or list(READERS):
                asked = []
                for path in sets:
                    part = ask_all(config, reader, index_dir, load_questions(path), path.name,
                                   held if wiki == "real bed" else set(), args.token_budget)
                    rows.append(row(path.name, reader, part))
                    if wiki == "real bed" and 0 < sum(a.held_out for a in part) < len(part):
                        # The same writer's questions on held-out pages against the rest: the fair comparison.
                        rows.append(row(f"  {path.name}: held-out pages", reader, [a for a in part if a.held_out]))
                        rows.append(row(f"  {path.name}: other pages", reader, [a for a in part if not a.held_out]))
                    asked += part
                results[wiki, reader] = asked
                if wiki == "real bed":
                    rows.append(row("real bed: all", reader, asked))
                    rows.append(row("  held-out pages", reader, [a for a in asked if a.held_out]))
                    rows.append(row("  other pages", reader, [a for a in asked if not a.held_out]))
                print(tabulate(rows, headers=HEADERS, tablefmt="github"), flush=True)
    table = tabulate(rows, headers=HEADERS, tablefmt="github")
    print(table)
    if args.no_write:
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    chart(results, OUT / "chart.png")
    (OUT / "report.md").write_text("\n".join([
        "# Jarvis's own reader against the sentence reader", "",
        "Written by `python bench/reader_quality.py`: every question asked as `jarvis ask` asks it, on sets held "
        "back from every fit (no model, confidence fit or threshold learned from them). `realbed_heldout.txt` "
        "asks only about the real bed's held-out pages.", "", table, "", "![full F1 and the player's view](chart.png)",
        ""]), encoding="utf-8")
    print(f"wrote {OUT}/report.md and chart.png")
    return 0


def chart(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{wiki}\n{READERS.get(reader, reader)}" for wiki, reader in results]
    metrics = {"full F1": lambda a: sum(x.f1 for x in a) / len(a),
               "stated right": lambda a: (sum(x.right for x in a if x.stated) / max(1, sum(x.stated for x in a))),
               "coverage": lambda a: sum(x.stated for x in a) / len(a)}
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(metrics)
    for i, (name, metric) in enumerate(metrics.items()):
        ax.bar([j + i * width for j in range(len(labels))], [metric(a) for a in results.values()], width, label=name)
    ax.set_xticks([j + width for j in range(len(labels))], labels)
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("Held-back questions: Jarvis's own reader and the sentence reader")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
