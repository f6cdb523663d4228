"""Are the offline reader's weights still the best? A coordinate search over `config.FallbackSettings`.

    python bench/tune_fallback.py                  # one pass: every weight, one at a time
    python bench/tune_fallback.py --rounds 3       # keep moving while a change gains

Scores full-system F1 (retrieval + `fallback:minilm`) on the development sets only: the sample wiki's
eval/dev/sample_dev.txt and, when ../shared is there, the real bed's realbed_dev.txt, realbed_dev3.txt
and realbed_dev4.txt. Each weight is scaled by 0.5, 0.75, 1.33 and 2 (whole numbers moved by -2..+2),
one at a time; a change is taken when the mean over the sets gains at least --min-gain. The held-back
sets (eval/questions.txt, sample_dev2.txt, realbed_dev2.txt, realbed_dev5.txt, realbed_kinds.txt) are
scored only for the settings the search starts and ends with: they say whether a gain is real, and are
never searched on.

Retrieval is run once per question (the weights do not change it) and the question encoder keeps its
embeddings between settings, so a setting takes seconds. Prints a table per pass and the settings
the search ends with. Asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate  # noqa: E402

from jarvis.eval.metrics import best_f1  # noqa: E402
from jarvis.eval.questions import DEFAULT_QUESTIONS, load_questions  # noqa: E402
from jarvis.index import build_index  # noqa: E402
from jarvis.assembly import assemble
from jarvis.config import Config, FallbackSettings  # noqa: E402
from jarvis.confidence import ConfidenceModel  # noqa: E402
from jarvis.readers.fallback import SentenceReader  # noqa: E402
from jarvis.pipeline import Jarvis  # noqa: E402

DEV = ROOT / "eval" / "dev"
FACTORS = (0.5, 0.75, 1.33, 2.0)
STEPS = (-2, -1, 1, 2)


@dataclass
class QuestionSet:
    name: str
    held_back: bool        # scored, never searched on
    jarvis: Jarvis
    asked: list            # (question, retrieved pages, gold answers)


def load_sets(config: Config, workdir: Path) -> list[QuestionSet]:
    beds = [("sample wiki", config.bundled_corpus, [DEV / "sample_dev.txt"], [DEFAULT_QUESTIONS, DEV / "sample_dev2.txt"])]
    if config.realbed_pages.is_file():
        from jarvis.eval.realbed import realbed_corpus

        corpus = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=False)
        beds.append(("real bed", corpus, [DEV / "realbed_dev.txt", DEV / "realbed_dev3.txt", DEV / "realbed_dev4.txt"],
                     [DEV / "realbed_dev2.txt", DEV / "realbed_dev5.txt", DEV / "realbed_kinds.txt"]))
    else:
        print("(no ../shared/realwiki: the sample wiki's sets only)")
    reader = replace(config.reader, model="", reader="fallback:minilm", cache_size=0)
    sets = []
    for number, (bed, corpus, tuned, held) in enumerate(beds):
        index_dir = workdir / f"index-{number}"
        print(f"indexing the {bed} ...", flush=True)
        build_index(corpus, index_dir, progress=False)
        # The weights are judged by F1 alone: no confidence model is needed.
        jarvis = assemble(replace(config, reader=reader), index_dir, ConfidenceModel.neutral("fallback"))
        for path, held_back in [(p, False) for p in tuned] + [(p, True) for p in held]:
            asked = [(q.text, jarvis.searcher.search(q.text, k=jarvis.top_k), q.answers)
                     for q in load_questions(path)]
            sets.append(QuestionSet(path.name, held_back, jarvis, asked))
    return sets


def full_f1(sets: list[QuestionSet], settings: FallbackSettings, held_back: bool) -> dict[str, float]:
    """Mean full-system F1 per set (the dev sets, or the held-back ones) under these reader weights."""
    scores = {}
    for qset in sets:
        if qset.held_back != held_back:
            continue
        reader = SentenceReader(qset.jarvis.reader.encoder, settings)
        total = 0.0
        for question, pages, golds in qset.asked:
            span = reader.read(question, qset.jarvis.passages_of(pages))
            total += best_f1(span.text if span else "", golds)
        scores[qset.name] = total / max(1, len(qset.asked))
    return scores


def variants(settings: FallbackSettings) -> Iterator[tuple[str, FallbackSettings]]:
    """Every setting one weight away from ``settings``, named for the change."""
    for spec in fields(settings):
        value = getattr(settings, spec.name)
        if spec.name == "block_weights_lexical":
            continue   # the lexical variant is not what is measured here
        if isinstance(value, dict):
            for part, weight in value.items():
                for factor in FACTORS:
                    changed = {**value, part: round(weight * factor if weight else 0.1 * factor, 4)}
                    yield f"{spec.name}[{part}] x{factor}", replace(settings, **{spec.name: changed})
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            for step in STEPS:
                if value + step >= 1:
                    yield f"{spec.name} {step:+d}", replace(settings, **{spec.name: value + step})
        elif isinstance(value, float):
            for factor in FACTORS:
                changed = round(value * factor, 4)
                if spec.name == "min_page_share" and changed > 1:
                    continue
                yield f"{spec.name} x{factor}", replace(settings, **{spec.name: changed})


def mean(scores: dict[str, float]) -> float:
    return sum(scores.values()) / max(1, len(scores))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="passes over every weight (default: %(default)s)")
    parser.add_argument("--min-gain", type=float, default=0.003,
                        help="mean full F1 a change must gain to be taken (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from jarvis.runtime import set_threads

    set_threads(args.threads)     # torch's and the onnxruntime sessions' threads, for the whole process
    config = Config.from_env()
    with tempfile.TemporaryDirectory() as tmp:
        sets = load_sets(config, Path(tmp))
        start = current = FallbackSettings()
        best = full_f1(sets, current, held_back=False)
        names = list(best)
        taken = []
        for number in range(1, args.rounds + 1):
            rows = [["(current)", f"{mean(best):.4f}", ""] + [f"{best[n]:.3f}" for n in names]]
            began, moved = time.perf_counter(), False
            for change, candidate in variants(current):
                scores = full_f1(sets, candidate, held_back=False)
                gain = mean(scores) - mean(best)
                rows.append([change, f"{mean(scores):.4f}", f"{gain:+.4f}"] + [f"{scores[n]:.3f}" for n in names])
                if gain >= args.min_gain:
                    current, best, moved = candidate, scores, True
                    taken.append(change)
                    rows[-1][0] += "  <- taken"
            print(f"\npass {number} ({time.perf_counter() - began:.0f} s)")
            print(tabulate(rows, headers=["change", "mean full F1", "gain"] + names, tablefmt="github"))
            if not moved:
                break
        held_start, held_end = full_f1(sets, start, True), full_f1(sets, current, True)
        print("\nheld-back sets (full F1), never searched on:")
        print(tabulate([[n, f"{held_start[n]:.3f}", f"{held_end[n]:.3f}"] for n in held_start],
                       headers=["set", "default weights", "after the search"], tablefmt="github"))
        print("\nchanges taken:", ", ".join(taken) if taken else "none (the defaults are a local optimum)")
        if taken:
            print(current)
        for jarvis in {id(s.jarvis): s.jarvis for s in sets}.values():
            jarvis.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
