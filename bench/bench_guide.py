"""The server guide beside the wiki: how much must the guide be preferred, and what does it cost the wiki?

    python bench/bench_guide.py              # retrieval margins, prior sweep, then the full check
    python bench/bench_guide.py --no-full    # margins and sweep only (seconds)

Indexes the bundled sample wiki with Blockhaven's guide (wikis/serverguide/pages) beside it, then:

1. Margins, with no preference for the guide (server prior 1.0): for each guide question
   (eval/dev/server_guide.txt) the best wiki page's fused score over the expected guide page's
   (above 1: the wiki would win); for each wiki question (eval/questions.txt and the two sample dev
   sets) the best wiki page's score over the best guide page's (the guide wins there once the
   prior exceeds it). A prior between the two is the measured rule.
2. The sweep: for server priors from 1.0 to 2.0, how many guide questions rank their page first,
   how many wiki questions rank a guide page first, how many wiki questions lose their expected
   page from the top 3.
3. The full check at the configured prior (RetrievalSettings' default), with the offline reader:
   which guide questions are answered from their page, which wiki questions are answered from the
   guide, and `jarvis eval --quick` on eval/questions.txt with and without the guide indexed.

Prints tables; asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate  # noqa: E402

from jarvis.crawler.guide import GUIDE_SITE  # noqa: E402
from jarvis.eval.questions import DEFAULT_QUESTIONS, load_questions  # noqa: E402
from jarvis.index import CorpusSource, GuideSource, Searcher, build_index  # noqa: E402
from jarvis.index.settings import SERVER_GUIDE_PRIOR  # noqa: E402
from jarvis.config import Config  # noqa: E402

GUIDE = ROOT / "wikis" / "serverguide" / "pages"
GUIDE_QUESTIONS = ROOT / "eval" / "dev" / "server_guide.txt"
WIKI_QUESTIONS = [ROOT / "eval" / "questions.txt", ROOT / "eval" / "dev" / "sample_dev.txt",
                  ROOT / "eval" / "dev" / "sample_dev2.txt"]
PRIORS = [1.0, 1.1, 1.2, 1.25, 1.3, 1.4, 1.5, 1.75, 2.0]
DEPTH = 50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-full", action="store_true", help="skip the full-pipeline check and the eval")
    args = parser.parse_args()
    config = Config.from_env()
    with tempfile.TemporaryDirectory() as tmp:
        both, wiki_only = Path(tmp) / "both", Path(tmp) / "wiki"
        build_index([CorpusSource(config.bundled_corpus), GuideSource(GUIDE)], both, progress=False)
        guide_qs = load_questions(GUIDE_QUESTIONS)
        wiki_qs = [q for path in WIKI_QUESTIONS for q in load_questions(path)]
        neutral = replace(config.retrieval, page_kind_prior={**config.retrieval.page_kind_prior, "server": 1.0})
        with Searcher(both, neutral) as searcher:
            guide_rows = [_scores(searcher, q) for q in guide_qs]
            wiki_rows = [_scores(searcher, q) for q in wiki_qs]
        print_margins(guide_rows, wiki_rows)
        print_sweep(guide_rows, wiki_rows)
        if not args.no_full:
            build_index(config.bundled_corpus, wiki_only, progress=False)
            full_check(config, both, wiki_only, guide_qs, wiki_qs)
    return 0


def _scores(searcher: Searcher, question) -> dict:
    """The neutral fused scores of the pages of both sites for one question."""
    hits = searcher.search(question.text, k=DEPTH)
    wiki = [h for h in hits if h.site != GUIDE_SITE]
    guide = [h for h in hits if h.site == GUIDE_SITE]
    return {"q": question, "wiki": [(h.title, h.score) for h in wiki], "guide": [(h.title, h.score) for h in guide]}


def _top(row: dict, prior: float) -> tuple[str, str]:
    """(site kind, title) of the first page when guide pages count `prior` times."""
    candidates = [(s, "wiki", t) for t, s in row["wiki"]] + [(s * prior, "guide", t) for t, s in row["guide"]]
    if not candidates:
        return ("none", "")
    score, side, title = max(candidates)
    return side, title


def _top3(row: dict, prior: float) -> list[str]:
    candidates = [(s, t) for t, s in row["wiki"]] + [(s * prior, t) for t, s in row["guide"]]
    return [t for _, t in sorted(candidates, reverse=True)[:3]]


def _same(a: str, b: str) -> bool:
    return " ".join(a.replace("_", " ").split()).casefold() == " ".join(b.replace("_", " ").split()).casefold()


def print_margins(guide_rows: list[dict], wiki_rows: list[dict]) -> None:
    needs = []
    for row in guide_rows:
        expected = next((s for t, s in row["guide"] if _same(t, row["q"].expected_title)), 0.0)
        best_wiki = row["wiki"][0][1] if row["wiki"] else 0.0
        needs.append((best_wiki / expected if expected else float("inf"), row["q"].text,
                      row["wiki"][0][0] if row["wiki"] else "-"))
    needs.sort(reverse=True)
    keeps = []
    for row in wiki_rows:
        best_wiki = row["wiki"][0][1] if row["wiki"] else 0.0
        best_guide = row["guide"][0][1] if row["guide"] else 0.0
        keeps.append((best_wiki / best_guide if best_guide else float("inf"), row["q"].text,
                      row["guide"][0][0] if row["guide"] else "-"))
    keeps.sort()
    print(f"Guide questions ({len(guide_rows)}): best wiki page / expected guide page, server prior 1.0 "
          "(above 1: the wiki wins without a prior)")
    print(tabulate([[f"{r:.3f}", q, w] for r, q, w in needs[:6]], headers=["ratio", "question", "best wiki page"]))
    print(f"\nWiki questions ({len(wiki_rows)}): best wiki page / best guide page (the guide wins above this prior)")
    print(tabulate([[f"{r:.3f}", q, g] for r, q, g in keeps[:6]], headers=["ratio", "question", "best guide page"]))
    print(f"\nsafe interval for the server prior: above {needs[0][0]:.3f}, below {keeps[0][0]:.3f}\n")


def print_sweep(guide_rows: list[dict], wiki_rows: list[dict]) -> None:
    rows = []
    for prior in PRIORS:
        guide_first = sum(_top(r, prior)[0] == "guide" and _same(_top(r, prior)[1], r["q"].expected_title)
                          for r in guide_rows)
        wiki_lost = sum(_top(r, prior)[0] == "guide" for r in wiki_rows)
        top3_lost = sum(any(_same(t, r["q"].expected_title) for t in _top3(r, 1.0))
                        and not any(_same(t, r["q"].expected_title) for t in _top3(r, prior)) for r in wiki_rows)
        rows.append([f"{prior:g}" + (" (default)" if prior == SERVER_GUIDE_PRIOR else ""),
                     f"{guide_first}/{len(guide_rows)}", wiki_lost, top3_lost])
    print("Server prior sweep (retrieval, first page):")
    print(tabulate(rows, headers=["server prior", "guide q: right guide page first", "wiki q: a guide page first",
                                  "wiki q: expected page pushed out of the top 3"]))
    print()


def full_check(config: Config, both: Path, wiki_only: Path, guide_qs: list, wiki_qs: list) -> None:
    from jarvis.eval import EvalOptions, run_eval
    from jarvis.assembly import assemble

    fallback = replace(config, reader=replace(config.reader, model="", cache_size=0))
    with assemble(fallback, both) as jarvis:
        guide_answers = [(q, jarvis.ask(q.text)) for q in guide_qs]
        wiki_answers = [(q, jarvis.ask(q.text)) for q in wiki_qs]
    right = [(q, a) for q, a in guide_answers if a.site == GUIDE_SITE and _same(a.title, q.expected_title)]
    from jarvis.eval.metrics import best_f1

    print(f"Full pipeline ({guide_answers[0][1].reader}), server prior {SERVER_GUIDE_PRIOR:g}:")
    print(f"  guide questions answered from their guide page: {len(right)}/{len(guide_qs)}; "
          f"mean F1 {sum(best_f1(a.text, q.answers) for q, a in guide_answers) / len(guide_qs):.3f}")
    for q, a in guide_answers:
        if (q, a) not in right:
            print(f"    miss: {q.text!r} -> {a.title!r} ({a.site}) {a.text!r}")
    from_guide = [(q, a) for q, a in wiki_answers if a.site == GUIDE_SITE]
    print(f"  wiki questions answered from the guide: {len(from_guide)}/{len(wiki_qs)}")
    for q, a in from_guide:
        print(f"    {q.text!r} -> {a.title!r}")
    results = {}
    with tempfile.TemporaryDirectory() as out:
        for name, index in (("sample wiki alone", wiki_only), ("sample wiki + guide", both)):
            options = EvalOptions(questions=DEFAULT_QUESTIONS, corpus=config.bundled_corpus, out_dir=Path(out) / name,
                                  index_dir=index, models=[""], quick=True, progress=False)
            report = run_eval(options, fallback)
            results[name] = report.to_json()
    rows = [[name, r["n"], f"{r['ir_top3_accuracy']:.3f}", f"{r['qa_f1']:.3f}", f"{r['full_f1']:.3f}"]
            for name, r in results.items()]
    print("\n`jarvis eval --quick` on eval/questions.txt, offline reader:")
    print(tabulate(rows, headers=["index", "n", "IR top-3", "QA F1", "full F1"]))
    per = [_answers(r) for r in results.values()]
    print(f"QA and full-system answers identical for every question: {per[0] == per[1]}")
    guide_titles = {q.expected_title for q in guide_qs}
    shown = sum(bool(set(q["retrieved"]) & guide_titles) for key, rows in results["sample wiki + guide"]["per_question"].items()
                if key.startswith("ir:") for q in rows)
    print(f"IR: questions whose top 3 shows a guide page (never read: the wiki ranked first): {shown}")


def _answers(result: dict) -> dict:
    return {key: [(q["question"], q["answer"], q["answer_title"], q["f1"]) for q in rows]
            for key, rows in result["per_question"].items() if not key.startswith("ir:")}


if __name__ == "__main__":
    sys.exit(main())
