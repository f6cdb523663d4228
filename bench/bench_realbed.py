"""Crawl of the real-wiki test bed: pages, aliases, requests, seconds and page kinds per --tables mode.

    python bench/bench_realbed.py                                  # every --tables mode
    python bench/bench_realbed.py --tables text --questions FILE   # and `jarvis eval --quick` on the crawl
    python bench/bench_realbed.py --api                            # API crawl vs link crawl, and --update

With --api: a link crawl (--no-api) and a crawl through the mirror's api.php, each with --delay 0 and
--tables text, then an --update of the API crawl with nothing changed; per crawl the requests,
requests per stored article, bytes received, seconds, pages and aliases stored, and whether the two
corpora hold the same pages and text.

Serves ``../shared/realwiki`` with ``jarvis realbed-wiki`` in its own process, crawls it with
--delay 0 into a temporary directory and prints the figures (with --questions, also the eval's
IR top-3, QA F1 and full-system F1). Asserts nothing; says so and exits 0 when the bed is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from jarvis_lab.bench.local_wiki import start_local_wiki  # noqa: E402

from jarvis.crawler import CrawlSettings, crawl, read_corpus  # noqa: E402
from jarvis.crawler.tables import TABLE_MODES  # noqa: E402
from jarvis.config import REALBED_PAGES  # noqa: E402


def start_server() -> tuple[subprocess.Popen, str]:
    return start_local_wiki("realbed-wiki")


def evaluate(corpus: Path, questions: Path, out: Path) -> dict:
    result = out / "jarvis.eval.json"
    subprocess.run([sys.executable, "-m", "jarvis", "eval", "--quick", "--quiet", "--corpus", str(corpus),
                    "--questions", str(questions), "--out", str(out / "report"), "--json", str(result)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(result.read_text())


def corpus_text(path: Path) -> list[tuple]:
    """A corpus without its aliases: the link crawl only sees the aliases the Main Page links."""
    return sorted((p.url, p.title, p.page_kind, tuple(p.paragraphs), p.sha1) for p in read_corpus(path))


def compare_api(base_url: str, tmp: Path) -> None:
    rows = []
    for name, settings, update in [("link crawl (--no-api)", CrawlSettings(delay=0, use_api=False), False),
                                   ("API crawl", CrawlSettings(delay=0), False),
                                   ("API --update, no change", CrawlSettings(delay=0), True)]:
        out = tmp / ("links" if not settings.use_api else "api") / "corpus.jsonl"
        report = crawl(f"{base_url}/w/Main_Page", out, settings, progress=False, update=update)
        pages = read_corpus(out)
        rows.append((name, report, len(pages), sum(len(p.aliases) for p in pages)))
    print(f"{'':26} {'requests':>8} {'URLs':>6} {'req/stored':>10} {'bytes':>11} {'seconds':>8} {'pages':>6} "
          f"{'aliases':>7}")
    for name, report, pages, aliases in rows:
        print(f"{name:26} {report.requests:8d} {report.visited:6d} {report.requests / max(pages, 1):10.3f} "
              f"{report.bytes:11,d} {report.seconds:8.1f} {pages:6d} {aliases:7d}")
    same = corpus_text(tmp / "links" / "corpus.jsonl") == corpus_text(tmp / "api" / "corpus.jsonl")
    print(f"same pages and text in both corpora: {same}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", choices=TABLE_MODES, action="append", help="mode(s) to crawl (default: all)")
    parser.add_argument("--questions", type=Path, help="also run `jarvis eval --quick` with this question file")
    parser.add_argument("--api", action="store_true", help="compare an API crawl with a link crawl, and --update")
    args = parser.parse_args()
    if not REALBED_PAGES.is_file():
        print(f"skipped: the real-wiki test bed is not there ({REALBED_PAGES})")
        return 0
    process, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.api:
                compare_api(base_url, Path(tmp))
                return 0
            for mode in args.tables or TABLE_MODES:
                out = Path(tmp) / mode
                report = crawl(f"{base_url}/w/Main_Page", out / "corpus.jsonl",
                               CrawlSettings(delay=0, tables=mode, use_api=False), progress=False)
                pages = read_corpus(out / "corpus.jsonl")
                kinds = Counter(page.page_kind for page in pages)
                print(f"--tables {mode}: {report.stored} pages, {report.aliases} aliases, "
                      f"{sum(len(p.paragraphs) for p in pages)} paragraphs; {report.visited} URLs, "
                      f"{report.requests} requests in {report.seconds:.1f} s; skipped {dict(report.skipped)}")
                print("  kinds: " + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()))
                if args.questions:
                    figures = evaluate(out / "corpus.jsonl", args.questions, out)
                    print("  eval: " + json.dumps({k: figures.get(k) for k in ("ir_top3_accuracy", "qa_f1", "full_f1", "n")}))
    finally:
        process.terminate()
        process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
