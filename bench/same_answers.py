"""Same answers before and after a reorganisation: every question of a question file asked through the CLI's
JSON contract (`jarvis ask QUESTION --json --no-log`, one fresh process a question), one row a question, and
two recordings compared row by row.

    python bench/same_answers.py record --out before.json                       # eval/questions.txt, default index
    python bench/same_answers.py record --out before-guide.json --index DIR --questions eval/dev/server_guide.txt \
        --label "the bundled corpus with the example guide"
    python bench/same_answers.py compare before.json after.json [--markdown comparison.md]

A row is what a player and the eval see of an answer: the question, the answer text, its page (``title``),
``confidence``, ``abstained`` and ``reply`` (the keys of `jarvis ask --json`, which every version since v0.3
prints). Only the CLI is used, so the same script records a checkout before and after its code moved.
``record`` runs with ``JARVIS_HOME`` set to a fresh folder unless ``--home`` names one (the default index is
built there from the bundled corpus on the first question). ``compare`` counts the rows that differ (a
confidence within ``--tolerance`` of the other counts as the same: float noise) and exits 1 when one does.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from jarvis.eval.questions import load_questions

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.txt"
KEYS = ("answer", "title", "confidence", "abstained", "reply")


def ask(question: str, home: Path, index: str | None) -> dict:
    """One question through a fresh `jarvis ask --json --no-log`: the row of KEYS."""
    command = [sys.executable, "-m", "jarvis", "ask", question, "--json", "--no-log"]
    if index:
        command += ["--index", index]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "JARVIS_HOME": str(home)}, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"jarvis ask {question!r} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    answer = json.loads(done.stdout)
    return {"question": question, **{key: answer[key] for key in KEYS}}


def record(args: argparse.Namespace) -> None:
    questions = load_questions(args.questions)
    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="jarvis-same-answers-"))
    rows = []
    for number, q in enumerate(questions, 1):
        rows.append(ask(q.text, home, args.index))
        print(f"{number}/{len(questions)} {q.text!r}: {rows[-1]['reply'][:90]}", file=sys.stderr)
    questions = Path(args.questions).resolve()
    out = {"questions": str(questions.relative_to(ROOT)) if questions.is_relative_to(ROOT) else questions.name,
           "index": args.label or (Path(args.index).name if args.index else "the default index (bundled corpus)"),
           "rows": rows}
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows written to {args.out}")


def differences(before: list[dict], after: list[dict], tolerance: float) -> list[tuple[str, str]]:
    """(question, what differs) for every field of a row (matched by position and question) that differs."""
    found = []
    if len(before) != len(after):
        found.append(("", f"{len(before)} rows before, {len(after)} after"))
    for old, new in zip(before, after):
        if old["question"] != new["question"]:
            found.append((old["question"], f"question {old['question']!r} became {new['question']!r}"))
            continue
        for key in KEYS:
            a, b = old[key], new[key]
            same = abs(a - b) <= tolerance if key == "confidence" else a == b
            if not same:
                found.append((old["question"], f"{old['question']!r}: {key} {a!r} -> {b!r}"))
    return found


def compare(args: argparse.Namespace) -> int:
    before = json.loads(Path(args.before).read_text(encoding="utf-8"))
    after = json.loads(Path(args.after).read_text(encoding="utf-8"))
    found = differences(before["rows"], after["rows"], args.tolerance)
    stated = sum(not row["abstained"] for row in after["rows"])
    changed = {question for question, _ in found}
    summary = (f"{len(after['rows'])} questions ({after['questions']}, {after['index']}): "
               f"{len(after['rows']) - len(changed)} rows the same, {len(found)} field(s) differ; {stated} stated")
    print(summary)
    for _, line in found:
        print("  " + line)
    if args.markdown:
        lines = [f"# Same answers: {Path(args.before).name} and {Path(args.after).name}", "",
                 f"`python bench/same_answers.py compare {args.before} {args.after}` (confidence tolerance "
                 f"{args.tolerance:g})", "", summary, ""]
        lines += [f"- {line}" for _, line in found] or ["Every row is the same: question, answer, title, confidence, "
                                                     "abstained, reply."]
        Path(args.markdown).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("record", help="ask every question, write the rows")
    p.add_argument("--out", required=True)
    p.add_argument("--questions", default=str(QUESTIONS))
    p.add_argument("--index", default=None, help="an index folder (default: the bundled corpus's)")
    p.add_argument("--home", default=None, help="JARVIS_HOME to run in (default: a fresh folder)")
    p.add_argument("--label", default=None, help="what the recording calls the index (default: its folder's name)")
    p = sub.add_parser("compare", help="compare two recordings")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--markdown", default=None)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
