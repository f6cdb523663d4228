"""Fit the readers' confidence models on the dev sets, choose the answer threshold, judge both on the sets
held back from the fit. Writes the models Jarvis ships (jarvis/readers/data/confidence-*.json) and a report
with charts (docs/eval/confidence/).

    python bench/fit_confidence.py                         # every reader, shipped files rewritten
    python bench/fit_confidence.py --reader jarvis --dry-run

Readers: ``jarvis`` (Jarvis's own reader, shipped in the package: the offline default) and the sentence
readers ``fallback:minilm`` and ``fallback:lexical``.

The fit (the questions whose answers the model learns from): new questions as players' are (sample_dev2.txt
on the sample wiki; realbed_dev2.txt and realbed_dev4.txt on the real-wiki test bed), and the sets the
sentence reader's rules were developed on (sample_dev.txt, realbed_dev.txt, realbed_dev3.txt,
realbed_kinds.txt), marked for the sentence readers with the ``developed_on`` signal: their answers are
right more often than a new question's, and the mark takes that up (in use it is never set). For Jarvis's
own reader every dev set is new (it was trained on eval/train/, never on a dev set). No fit learns from a
question about a page of the real bed's held-out list (../shared/realwiki/heldout_pages.txt): those are
dropped from every fit set. The threshold is chosen on the new-question sets of the fit. Held back, only
judged: eval/questions.txt (sample wiki), realbed_dev5.txt and realbed_heldout.txt (real bed). Without
../shared the real bed's sets are left out (and nothing is written: the shipped models are fitted on both
wikis).

The threshold: the lowest at which the stated answers of the fit questions are --precision right, on
cross-validated confidences (each question's confidence from a model fitted without it). Prints a table
per set: the right rate if everything were stated, full F1, precision and coverage at the threshold, how
often an unsure reply points to the expected page, the largest calibration gap (bins of 0.2 with >= 10
answers) and the AUC. Asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate  # noqa: E402

from jarvis.crawler.corpus import read_corpus  # noqa: E402
from jarvis.eval.calibration import (SetFigures, as_answered, choose_threshold, cross_validated, figures, fit,  # noqa: E402
                              observe, risk_coverage)
from jarvis.eval.players_view import write_trust_chart  # noqa: E402
from jarvis.eval.questions import DEFAULT_QUESTIONS, load_questions  # noqa: E402
from jarvis.eval.runner import PageResolver  # noqa: E402
from jarvis.index import Searcher, build_index  # noqa: E402
from jarvis.config import Config  # noqa: E402
from jarvis.confidence import AnswerPolicy, ConfidenceModel, shipped_model_path  # noqa: E402
from jarvis.assembly import assemble  # noqa: E402
from jarvis.readers import load_reader  # noqa: E402

DEV = ROOT / "eval" / "dev"
REPORT_DIR = ROOT / "docs" / "eval" / "confidence"
READERS = ("jarvis", "fallback:minilm", "fallback:lexical")   # jarvis: Jarvis's own reader, shipped


def beds(config: Config) -> list[tuple[str, Path, list[Path], list[Path], list[Path]]]:
    """(wiki, corpus, fit sets, held-back sets, sets the reader's rules were developed on)."""
    found = [("sample wiki", config.bundled_corpus, [DEV / "sample_dev2.txt"], [DEFAULT_QUESTIONS],
              [DEV / "sample_dev.txt"])]
    if config.realbed_pages.is_file():
        from jarvis.eval.realbed import realbed_corpus

        found.append(("real bed", realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=False),
                      [DEV / "realbed_dev2.txt", DEV / "realbed_dev4.txt"],
                      [DEV / "realbed_dev5.txt", DEV / "realbed_heldout.txt"],
                      [DEV / "realbed_dev.txt", DEV / "realbed_dev3.txt", DEV / "realbed_kinds.txt"]))
    return found


def fit_questions(path: Path, held_out: set[str]) -> list:
    """A fit set's questions, less those about the real bed's held-out pages: no fit learns from them."""
    return [q for q in load_questions(path) if q.expected_title not in held_out]


def observe_all(config: Config, reader_name: str, workdir: Path) -> tuple[list, list, list, dict, object]:
    """Every question answered and judged: (fit, held back, developed-on observations; wiki of each set;
    the reader's name as it answers)."""
    from jarvis.eval.realbed import heldout_titles

    held_out = heldout_titles(config.realbed_pages)
    fit_obs, held_obs, developed_obs, wiki_of = [], [], [], {}
    for number, (wiki, corpus, fit_sets, held_sets, developed_sets) in enumerate(beds(config)):
        if reader_name == "jarvis":   # no rule of Jarvis's own reader was developed on any set: all are new to it
            fit_sets, developed_sets = fit_sets + developed_sets, []
        index_dir = workdir / f"index-{number}"
        print(f"indexing the {wiki} ...", flush=True)
        build_index(corpus, index_dir, progress=False)
        resolver = PageResolver(read_corpus(corpus))
        with Searcher(index_dir, config.retrieval) as searcher:
            searcher.warm_up()
            reader = load_reader(replace(config.reader, model=""), encoder=searcher.encoder, name=reader_name,
                                 glossary=searcher.glossary)
            jarvis = assemble(config, searcher=searcher, reader=reader, settings=replace(config.reader, cache_size=0),
                              policy=AnswerPolicy.of(ConfidenceModel.neutral(reader_name)))
            for path, into in ([(p, fit_obs) for p in fit_sets] + [(p, held_obs) for p in held_sets]
                               + [(p, developed_obs) for p in developed_sets]):
                wiki_of[path.name] = wiki
                questions = load_questions(path) if into is held_obs else fit_questions(path, held_out)
                into += observe(jarvis, questions, resolver, path.name, progress=False)
    return fit_obs, held_obs, developed_obs, wiki_of, reader


GUIDE_DIR = ROOT / "wikis" / "serverguide" / "pages"
# Fitted on server_guide2.txt, server_guide3.txt and server_guide5-7.txt (each by its own writer); judged on the
# first set and the fourth (a further writer's), held back.
GUIDE_FITS = [path for path in (DEV / "server_guide2.txt", DEV / "server_guide3.txt", DEV / "server_guide5.txt",
                                DEV / "server_guide6.txt", DEV / "server_guide7.txt") if path.is_file()]
GUIDE_HELD = [path for path in (DEV / "server_guide.txt", DEV / "server_guide4.txt") if path.is_file()]


def fit_guide(config: Config, reader_key: str, precision: float, dry_run: bool) -> list:
    """The confidence of answers read on the server's own guide pages: fitted on guide questions
    (server_guide2.txt, server_guide3.txt and server_guide5-7.txt, each by a separate writer), never inherited
    from wiki questions; judged on the held-back server_guide.txt and server_guide4.txt through the whole
    pipeline (the guide model for guide answers). Returns table rows."""
    from jarvis.crawler.guide import read_guide
    from jarvis.index.sources import CorpusSource, GuideSource
    from jarvis.confidence import GUIDE_SUFFIX

    guide_titles = {page.title for page in read_guide(GUIDE_DIR)}
    with tempfile.TemporaryDirectory() as tmp:
        index_dir = Path(tmp) / "guide-index"
        print("indexing the sample wiki with the server guide ...", flush=True)
        build_index([CorpusSource(config.bundled_corpus), GuideSource(GUIDE_DIR)], index_dir, progress=False)
        resolver = PageResolver([*read_corpus(config.bundled_corpus), *read_guide(GUIDE_DIR)])
        with Searcher(index_dir, config.retrieval) as searcher:
            searcher.warm_up()
            reader = load_reader(replace(config.reader, model=""), encoder=searcher.encoder, name=reader_key,
                                 glossary=searcher.glossary)
            neutral = assemble(config, searcher=searcher, reader=reader, settings=replace(config.reader, cache_size=0),
                               policy=AnswerPolicy.of(ConfidenceModel.neutral(reader.name)))
            fit_obs = [o for path in GUIDE_FITS
                       for o in observe(neutral, load_questions(path), resolver, path.name, progress=False)
                       if o.answer_title in guide_titles]
            name = f"{reader.name}-{GUIDE_SUFFIX}"
            confidence = cross_validated(fit_obs, name)
            threshold = choose_threshold(fit_obs, confidence, precision)
            model = fit(fit_obs, name, description=f"The {reader.name} reader's confidence in answers read on the "
                        "server's own guide pages: fitted by bench/fit_confidence.py on guide questions only.",
                        sets=[path.name for path in GUIDE_FITS], threshold=threshold, target_precision=precision)
            if not dry_run:
                model.save(shipped_model_path(f"{reader.id}-{GUIDE_SUFFIX}"))
            # Judged as a player would meet it: the whole pipeline, the guide model for guide answers.
            whole = assemble(config, searcher=searcher, reader=reader, settings=replace(config.reader, cache_size=0))
            whole.policy = whole.policy.with_models(guide=model)
            held = {path.name: observe(whole, load_questions(path), resolver, path.name, progress=False)
                    for path in GUIDE_HELD}
    cv = [o.judged(c, threshold) for o, c in zip(fit_obs, confidence)]
    held_judged = {name: [as_answered(o) for o in obs] for name, obs in held.items()}
    print(f"{name}: threshold {threshold:.3f} on {len(fit_obs)} guide answers"
          + ("" if dry_run else f"; wrote {shipped_model_path(f'{reader.id}-{GUIDE_SUFFIX}')}"))
    return [figures(f"{' + '.join(p.name for p in GUIDE_FITS)} (guide fit, cross-validated)", cv),
            *(figures(f"{name} (guide, held back, whole pipeline)", judged) for name, judged in held_judged.items()),
            figures("guide, every held-back set", [j for judged in held_judged.values() for j in judged])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", action="append", choices=READERS, help="reader to fit (default: both)")
    parser.add_argument("--precision", type=float, default=0.8,
                        help="the share of stated answers to be right at the threshold (default: %(default)s)")
    parser.add_argument("--dry-run", action="store_true", help="write nothing, print only")
    parser.add_argument("--guide-only", action="store_true",
                        help="fit only the guide's confidence model (the wiki's stays as it is)")
    args = parser.parse_args()
    if args.guide_only:
        config = Config.from_env()
        for reader_key in args.reader or READERS:
            rows = fit_guide(config, reader_key, args.precision, args.dry_run)
            print(tabulate([r.row() for r in rows], headers=SetFigures.HEADERS, tablefmt="github"))
        return 0
    config = Config.from_env()
    if not config.realbed_pages.is_file() and not args.dry_run:
        print("../shared/realwiki is missing: the shipped models are fitted on both wikis; use --dry-run")
        return 1
    for reader_key in args.reader or READERS:
        with tempfile.TemporaryDirectory() as tmp:
            fit_obs, held_obs, developed_obs, wiki_of, reader = observe_all(config, reader_key, Path(tmp))
        reader_name = reader.name
        confidence = cross_validated(fit_obs, reader_name, developed_on=developed_obs)
        threshold = choose_threshold(fit_obs, confidence, args.precision)
        fit_sets = sorted({o.set_name for o in fit_obs})
        developed_sets = sorted({o.set_name for o in developed_obs})
        model = fit(fit_obs, reader_name, developed_on=developed_obs,
                    description=f"The {reader_name} reader's confidence: a logistic regression of 'right' (F1 >= 0.5, "
                                "or a gold answer of two or more words in the answer and its sentence) on the pipeline's and the "
                                "reader's signals, Platt-scaled; fitted by bench/fit_confidence.py.",
                    sets=fit_sets, developed_on_sets=developed_sets, threshold=threshold,
                    target_precision=args.precision)

        cv_judged = [o.judged(c, threshold) for o, c in zip(fit_obs, confidence)]
        held_judged = [o.judged(model.predict(o.signals) if o.answer else 0.0, threshold) for o in held_obs]
        developed_judged = [o.judged(model.predict(o.signals) if o.answer else 0.0, threshold) for o in developed_obs]
        rows = [figures(f"{name} (fit, cross-validated)", [o for o in cv_judged if o.set_name == name])
                for name in fit_sets]
        for name in sorted({o.set_name for o in held_obs}, key=lambda n: (wiki_of[n], n)):
            rows.append(figures(f"{name} (held back)", [o for o in held_judged if o.set_name == name]))
        for name in sorted({o.set_name for o in developed_obs}, key=lambda n: (wiki_of[n], n)):
            rows.append(figures(f"{name} (rules developed on it; in the fit)",
                                [o for o in developed_judged if o.set_name == name]))
        pooled = {wiki: [o for o in held_judged if wiki_of[o.set_name] == wiki] for wiki in sorted(set(wiki_of.values()))}
        for wiki, judged in pooled.items():
            if judged:
                rows.append(figures(f"{wiki}: all held back", judged))
        table = tabulate([r.row() for r in rows], headers=SetFigures.HEADERS, tablefmt="github")
        weights = tabulate([[name, f"{weight:+.3f}"] for name, weight in model.weights()],
                           headers=["signal", "weight per standard deviation"], tablefmt="github")
        print(f"\n{reader_name}: threshold {threshold:.3f} (stated answers {args.precision:.0%} right on the fit sets, "
              f"cross-validated), C = {model.fitted_on['C']:.3g}, Platt a = {model.platt[0]:.3f}, b = {model.platt[1]:.3f}")
        guide_rows = fit_guide(config, reader_key, args.precision, args.dry_run)
        rows += guide_rows
        table = tabulate([r.row() for r in rows], headers=SetFigures.HEADERS, tablefmt="github")
        print(tabulate([r.row() for r in guide_rows], headers=SetFigures.HEADERS, tablefmt="github"))
        if args.dry_run:
            continue
        model.save(shipped_model_path(reader.id))   # found by the reader's id (jarvis/confidence)
        out = REPORT_DIR / reader_name.replace(":", "-")
        out.mkdir(parents=True, exist_ok=True)
        charts = []
        for wiki, judged in pooled.items():
            name = f"trust-{wiki.replace(' ', '-')}.png"
            write_trust_chart(judged, out / name, f"{reader_name}, {wiki}: the sets held back from the fit "
                              f"({len(judged)} questions)", threshold)
            charts.append(f"![risk–coverage and reliability, {wiki}, held back]({name})")
        curve = [[f"{t:.2f}", f"{c:.3f}", f"{p:.3f}"] for t, c, p in risk_coverage(pooled.get("real bed", []))[::10]]
        (out / "report.md").write_text("\n".join([
            f"# Confidence of {reader_name}", "",
            f"Fitted by `python bench/fit_confidence.py` on {', '.join(fit_sets)} (new questions)"
            + (f" and {', '.join(developed_sets)} (the reader's rules were developed on them; marked `developed_on`)"
               if developed_sets else "") + ": "
            f"{model.fitted_on['answers']} answers, right rate {model.fitted_on['right_rate']:.3f}. "
            f"Threshold {threshold:.3f}: the lowest at which the stated answers of the new questions of the fit "
            f"are {args.precision:.0%} right (cross-validated confidences). Held back: "
            f"{', '.join(sorted({o.set_name for o in held_obs}))}.", "",
            table, "", *charts, "",
            "Risk–coverage on the real bed's held-back sets (threshold, coverage, precision), every 10th point:", "",
            tabulate(curve, headers=["threshold", "coverage", "precision"], tablefmt="github"), "",
            "What the model weighs:", "", weights, ""]), encoding="utf-8")
        print(f"wrote {shipped_model_path(reader.id)} and {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
