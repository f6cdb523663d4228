"""The learning curve of Jarvis's own reader: F1 on a dev set after training on 25 %, 50 % and 100 % of the
training questions. It says whether more questions would pay.

    python bench/learning_curve.py --full DIR          # DIR: the reader trained on 100 % (the shipped one's
                                                       # Hugging Face folder, or jarvis/readers/data/jarvis-minilm-qa)
    python bench/learning_curve.py --full DIR --fractions 0.25 0.5 --epochs 2

Trains the smaller fractions with the shipped recipe (the same seed, settings and held-back sets: a fraction
is a seeded sample of the questions), then asks every model the dev questions: **QA F1** (the expected
page given, as `jarvis eval`'s QA mode reads it) and **full F1** (retrieval + reader, as `jarvis ask`). The
dev set: the real bed's dev sets 1-4 (`eval/dev/realbed_dev*.txt` but dev5), questions about held-out pages
left out — never trained on, and not the held-back sets the README's figures come from. Writes
docs/eval/reader/learning-curve.md and learning-curve.png. Asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from crawler.corpus import read_corpus  # noqa: E402
from eval.metrics import best_f1  # noqa: E402
from eval.questions import load_questions  # noqa: E402
from eval.realbed import heldout_titles, realbed_corpus  # noqa: E402
from eval.runner import PageResolver  # noqa: E402
from index import Searcher, build_index  # noqa: E402
from jarvis.assembly import assemble  # noqa: E402
from jarvis.config import Config  # noqa: E402
from jarvis.pipeline import normalize_question  # noqa: E402
from jarvis.readers.ranking import PassageRanker  # noqa: E402
from jarvis.training import GoldQuestion, TrainOptions, TrainSettings, search_all, train_reader  # noqa: E402

TRAIN = sorted((ROOT / "eval" / "train").glob("*.txt"))
DEV = [ROOT / "eval" / "dev" / f"realbed_dev{n}.txt" for n in ("", "2", "3", "4")]
HELD_BACK = [ROOT / "eval" / "questions.txt", *sorted((ROOT / "eval" / "dev").glob("*.txt"))]
OUT = ROOT / "docs" / "eval" / "reader"


def dev_f1(config: Config, model: Path, index_dir: Path, questions, resolver: PageResolver) -> tuple[float, float]:
    """(QA F1 with the expected page given, full-system F1) of the reader in ``model`` on ``questions``."""
    settings = replace(config.reader, model=str(model), reader="span", cache_size=0)
    qa = full = 0.0
    with assemble(config, index_dir, settings=settings) as jarvis:
        for q in questions:
            page = resolver.find(q.expected_title)
            if page is not None:
                qa += best_f1(jarvis.read_pages(q.text, [page]).text, q.answers)
            full += best_f1(jarvis.ask(q.text).text, q.answers)
    return qa / len(questions), full / len(questions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", required=True, type=Path, help="the reader trained on all the questions")
    parser.add_argument("--fractions", nargs="*", type=float, default=[0.25, 0.5])
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--work", type=Path, help="keep the trained models here (default: a temporary folder)")
    args = parser.parse_args()
    config = Config.from_env()
    if not config.realbed_pages.is_file():
        print("../shared/realwiki is missing: the learning curve is measured on the real bed")
        return 1
    bed = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=False)
    held = heldout_titles(config.realbed_pages)
    judged = {normalize_question(q.text) for path in HELD_BACK for q in load_questions(path)}
    questions = [GoldQuestion(q.text, q.expected_title, q.answers) for path in TRAIN for q in load_questions(path)]
    questions = [q for q in questions if q.title.casefold() not in {t.casefold() for t in held} and normalize_question(q.text) not in judged]
    dev = [q for path in DEV for q in load_questions(path) if q.expected_title not in held]
    pages = [*read_corpus(bed), *read_corpus(config.bundled_corpus)]
    resolver = PageResolver(read_corpus(bed))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        index_dir = work / "index"
        build_index(bed, index_dir, progress=False)
        with Searcher(index_dir, config.retrieval) as searcher:
            searcher.warm_up()
            hits = search_all(searcher, [q.text for q in questions], k=4, progress=True)
        models = []
        for fraction in args.fractions:
            out = work / f"reader-{int(fraction * 100)}"
            options = TrainOptions(out=out, fraction=fraction, train=TrainSettings(epochs=args.epochs, threads=2))
            began = time.perf_counter()
            result = train_reader(questions, pages, options, PassageRanker(config.reader.passages),
                                  search=lambda question, k: hits[question][:k], progress=True)
            print(result.summary(), flush=True)
            models.append((fraction, out, result.examples.used, time.perf_counter() - began))
        models.append((1.0, args.full, len(questions), None))
        for fraction, model, used, seconds in models:
            qa, full = dev_f1(config, model, index_dir, dev, resolver)
            rows.append([f"{fraction:.0%}", used, f"{qa:.3f}", f"{full:.3f}",
                         f"{seconds / 60:.0f} min" if seconds else "(the shipped run)"])
            print(rows[-1], flush=True)
    table = tabulate(rows, headers=["training questions", "used", "QA F1 (page given)", "full F1", "training time"],
                     tablefmt="github")
    print(table)
    OUT.mkdir(parents=True, exist_ok=True)
    chart(rows, OUT / "learning-curve.png", len(dev))
    (OUT / "learning-curve.md").write_text("\n".join([
        "# Learning curve of Jarvis's own reader", "",
        f"Written by `python bench/learning_curve.py`: trained on a seeded sample of the training questions with "
        f"the shipped recipe, asked the real bed's dev sets 1-4 ({len(dev)} questions, none about a held-out page, "
        "none trained on), on 2 CPU cores.", "", table, "", "![learning curve](learning-curve.png)", ""]),
        encoding="utf-8")
    return 0


def chart(rows: list, path: Path, n: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    used = [r[1] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(used, [float(r[2]) for r in rows], marker="o", label="QA F1 (page given)")
    ax.plot(used, [float(r[3]) for r in rows], marker="o", label="full F1")
    ax.set_xlabel("training questions")
    ax.set_ylabel(f"F1 on {n} dev questions")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
