"""The learning curve of Jarvis's own reader: dev F1 after training on 25 %, 50 % and 100 % of the training
questions. It says whether more questions would pay.

    # the examples, built once (the searches run here; see docs/reader-training.md):
    jarvis train-reader --realbed --questions eval/train/... --held-back ... --write-examples train.jsonl.gz
    jarvis train-reader --realbed --questions eval/dev/realbed_dev.txt ... --write-examples dev.jsonl.gz
    # then, here or on a machine with a GPU:
    python bench/learning_curve.py --examples train.jsonl.gz --dev-examples dev.jsonl.gz [-- train-reader flags]
    # or only the report, from the cards (jarvis-reader.json) of readers trained elsewhere:
    python bench/learning_curve.py --cards run-25/jarvis-reader.json run-50/jarvis-reader.json ...

Each fraction is a seeded sample of the questions (``train-reader --fraction``), trained with the same recipe;
**dev F1** is the trained reader's best span over every passage of a dev question's examples (its answer
paragraphs and the no-answer ones of its page and of the wrong pages retrieval returns), against the golds
(jarvis/training/evaluate.py): the reader alone, no retrieval. The dev set is the real bed's dev sets 1-4
(questions about held-out pages left out), never trained on, and not the held-back sets the README's
figures come from. Writes docs/eval/reader/learning-curve.md and learning-curve.png. Asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "eval" / "reader"


def train(examples: Path, dev: Path, fraction: float, out: Path, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "jarvis", "train-reader", "--examples", str(examples), "--dev-examples",
               str(dev), "--fraction", str(fraction), "--out", str(out), *extra]
    subprocess.run(command, check=True, cwd=ROOT)
    return json.loads((out / "jarvis-reader.json").read_text(encoding="utf-8"))


def report(cards: list[dict], note: str) -> str:
    from tabulate import tabulate

    cards = sorted(cards, key=lambda c: c["questions_used"])
    most = max(c["questions_used"] for c in cards)   # shares of the largest question set in the report
    rows = [[f"{c['questions_used'] / most:.0%}", c["questions_used"], c["windows"], f"{c['train']['epochs']:g}",
             f"{c['dev']['f1']:.3f}", f"{c['dev']['exact']:.3f}", f"{c['seconds'] / 60:.1f} min on {c['device']}"]
            for c in cards]
    table = tabulate(rows, headers=["share", "questions", "windows", "epochs", "dev F1", "dev exact", "training"],
                     tablefmt="github")
    chart(cards, OUT / "learning-curve.png")
    return "\n".join(["# Learning curve of Jarvis's own reader", "",
                      f"Dev: {cards[-1]['dev']['questions']} questions of the real bed's dev sets 1-4 (none about a "
                      "held-out page, none trained on); dev F1 is the reader alone on each question's passages "
                      "(bench/learning_curve.py, jarvis/training/evaluate.py). " + note, "", table, "",
                      "![learning curve](learning-curve.png)", ""])


def chart(cards: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    used = [c["questions_used"] for c in cards]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(used, [c["dev"]["f1"] for c in cards], marker="o", label="dev F1")
    ax.plot(used, [c["dev"]["exact"] for c in cards], marker="o", label="dev exact match")
    ax.set_xlabel("training questions")
    ax.set_ylabel(f"on {cards[-1]['dev']['questions']} dev questions")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=Path, help="training examples (train-reader --write-examples)")
    parser.add_argument("--dev-examples", type=Path, help="dev examples (the same, of the dev questions)")
    parser.add_argument("--fractions", nargs="*", type=float, default=[0.25, 0.5, 1.0])
    parser.add_argument("--cards", nargs="*", type=Path, help="only write the report, from these readers' cards")
    parser.add_argument("--note", default="", help="a sentence for the report (where it was trained)")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    if args.cards:
        cards = [json.loads(p.read_text(encoding="utf-8")) for p in args.cards]
    elif args.examples and args.dev_examples:
        with tempfile.TemporaryDirectory() as tmp:
            cards = [train(args.examples, args.dev_examples, f, Path(tmp) / f"reader-{f:g}", extra)
                     for f in args.fractions]
    else:
        parser.error("give --examples and --dev-examples, or --cards")
    if any("dev" not in c for c in cards):
        print("a card without a dev score: train with --dev-examples")
        return 1
    text = report(cards, args.note)
    print(text)
    (OUT / "learning-curve.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
