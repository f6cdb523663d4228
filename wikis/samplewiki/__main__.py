"""python -m jarvis_lab.samplewiki build-corpus | check

build-corpus  regenerate corpus.jsonl from the article sources (--check: only tell whether it is up to date)
check         list problems in the sources: bad links, titles, shared paragraphs, unsupported markup
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from jarvis.config import BUNDLED_CORPUS
from jarvis.errors import JarvisError
from jarvis_lab.samplewiki.corpus import build_corpus
from jarvis_lab.samplewiki.site import SampleWiki


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jarvis_lab.samplewiki", description=__doc__.splitlines()[0])
    subs = parser.add_subparsers(dest="command", required=True)
    build = subs.add_parser("build-corpus", help="regenerate the bundled corpus from the article sources")
    build.add_argument("--out", type=Path, default=BUNDLED_CORPUS, help="corpus JSONL to write (default: the bundled one)")
    build.add_argument("--check", action="store_true", help="do not write; exit 1 if --out is not up to date")
    subs.add_parser("check", help="list problems in the article sources and site.yaml")
    args = parser.parse_args(argv)
    try:
        wiki = SampleWiki.load()
        if args.command == "check":
            problems = wiki.problems()
            for problem in problems:
                print(problem)
            print(f"{len(wiki.articles)} articles, {len(wiki.redirects)} redirects, {len(problems)} problems",
                  file=sys.stderr)
            return 1 if problems else 0
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                fresh = Path(tmp) / "corpus.jsonl"
                build_corpus(fresh, wiki)
                current = args.out.read_bytes() if args.out.is_file() else b""
                if fresh.read_bytes() != current:
                    print(f"{args.out} is out of date: run python -m jarvis_lab.samplewiki build-corpus", file=sys.stderr)
                    return 1
            print(f"{args.out} is up to date")
            return 0
        count = build_corpus(args.out, wiki)
        print(f"wrote {count} pages to {args.out}")
        return 0
    except JarvisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
