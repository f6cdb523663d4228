"""The commands that build what Jarvis answers from: crawl (a wiki into a corpus), index (corpora and a
server guide into a search index), search (the top pages for a query)."""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from jarvis.cli.common import emit_json, index_dir, set_up_models
from jarvis.cli.parser import INDEX_PROFILES, Commands, positive
from jarvis.config import Config
from jarvis.crawler.settings import POLITE_DELAY, TABLE_MODES
from jarvis.errors import JarvisError, first_line

TITLE = "build the index"


def register(commands: Commands) -> None:
    _crawl_command(commands)
    _index_command(commands)
    _search_command(commands)


def cmd_crawl(args: argparse.Namespace, config: Config) -> int:
    from jarvis.crawler import crawl

    settings = replace(config.crawl, delay=args.delay, workers=args.workers, tables=args.tables)
    if args.user_agent:
        settings = replace(settings, user_agent=args.user_agent)
    if args.ignore_robots:
        settings = replace(settings, obey_robots=False)
    if args.no_api:
        settings = replace(settings, use_api=False)
    if args.update and args.resume:
        raise JarvisError("--update and --resume do not go together: an update is short, run it again")
    report = crawl(args.start, Path(args.out), settings, max_pages=args.max_pages, resume=args.resume,
                   progress=not args.quiet, update=args.update, site=args.site or "")
    print(report.summary(limit_name="--max-pages"))
    if args.index:
        from jarvis.index import build_index, sources_with

        # An index of several sources (other wikis, the guide) is rebuilt from all of them.
        sources = sources_with(Path(args.index), Path(args.out))
        set_up_models(config, answering=False)
        stats = build_index(sources, Path(args.index), progress=not args.quiet,   # incremental by fingerprint
                            settings=config.retrieval)
        print(stats.summary())
    elif args.update:
        print(f"to bring an index up to date (only the changed pages): jarvis index --corpus {args.out} --index DIR")
    return 0


def cmd_index(args: argparse.Namespace, config: Config) -> int:
    from jarvis.index import CorpusSource, GuideSource, SiteClashError, build_index
    from jarvis.index.glossary import Glossary

    corpora = getattr(args, "corpora", None) or []
    if not corpora and not args.docs:
        raise JarvisError("give a corpus (--corpus FILE) or a guide directory (--docs DIR) to index")
    if args.docs_url and not args.docs:
        raise JarvisError("--docs-url is the web address of the guide given with --docs DIR: give --docs too")
    sources = [CorpusSource(Path(path), site) for path, site in corpora]
    if args.docs:
        sources.append(GuideSource(Path(args.docs), docs_url=(args.docs_url or "").strip()))
    glossary = Glossary.load(args.glossary) if args.glossary else (Glossary() if args.no_glossary else None)
    set_up_models(config, answering=False)
    try:
        stats = build_index(sources, Path(args.index), profile=args.profile, procs=args.procs,
                            progress=not args.quiet, glossary=glossary, settings=config.retrieval)
    except SiteClashError as exc:
        where = f" (--site NAME after --corpus {exc.path})" if exc.path else ""
        raise JarvisError(f"{first_line(exc)}{where}") from exc
    print(stats.summary())
    return 0


def cmd_search(args: argparse.Namespace, config: Config) -> int:
    from jarvis.index import Searcher

    set_up_models(config, answering=False)
    with Searcher(index_dir(args, config)) as searcher:
        index = searcher.snapshot()
        hits = index.search(args.query, k=args.k)
    if args.json:
        emit_json([{"title": h.title, "score": round(h.score, 4), "url": h.url, "site": h.site} for h in hits])
    elif not hits:
        print("no pages matched")
    else:
        several = len(index.sites) > 1
        for rank, hit in enumerate(hits, 1):
            site = f", {hit.site}" if several and hit.site else ""
            print(f"{rank}. {hit.title}{site}  ({hit.score:.2f})")
    return 0


class _CorpusAction(argparse.Action):
    """--corpus FILE, repeatable: each one a [file, site] pair; --site NAME names the corpus given before it."""

    def __call__(self, parser, namespace, value, option_string=None):
        corpora = list(getattr(namespace, "corpora", None) or [])
        if option_string == "--corpus":
            corpora.append([value, ""])
        elif not corpora:
            parser.error("--site names the wiki of the --corpus given before it: give --corpus FILE first")
        elif corpora[-1][1]:
            parser.error(f"--site given twice for --corpus {corpora[-1][0]}")
        else:
            corpora[-1][1] = value
        namespace.corpora = corpora


def _crawl_command(commands: Commands) -> None:
    p = commands.add("crawl", cmd_crawl, "crawl a MediaWiki site into a corpus JSONL file")
    p.add_argument("--start", required=True, metavar="URL", help="article URL to start from, e.g. https://minecraft.wiki/w/Cow")
    p.add_argument("--out", required=True, metavar="FILE", help="corpus JSONL to write")
    p.add_argument("--max-pages", type=positive, default=None, metavar="N", help="stop after N stored pages")
    p.add_argument("--delay", type=float, default=None, metavar="S",
                   help="seconds between requests to the host, raised by its robots.txt's Crawl-delay (default: "
                        "none for a wiki on this machine: localhost, 127.0.0.0/8, ::1; "
                        f"{POLITE_DELAY:g} s, or its Crawl-delay, for any other host)")
    p.add_argument("--workers", type=positive, default=Config().crawl.workers, metavar="N",
                   help="fetch threads (default: %(default)s)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted crawl of --out")
    p.add_argument("--update", action="store_true",
                   help="only what changed since the last crawl of --out (MediaWiki API recent changes; "
                        "without an API: conditional requests)")
    p.add_argument("--index", metavar="DIR", default=None,
                   help="then update this search index from --out (incremental: only changed pages)")
    p.add_argument("--no-api", action="store_true", help="follow links even where the wiki has an API")
    p.add_argument("--user-agent", default=None, help="override the crawler's User-Agent")
    p.add_argument("--ignore-robots", action="store_true", help="do not obey robots.txt (only for your own sites)")
    p.add_argument("--site", metavar="NAME", default=None,
                   help="the wiki's name, recorded on every page (default: as the wiki states it)")
    p.add_argument("--tables", choices=list(TABLE_MODES), default=Config().crawl.tables,
                   help="content tables: drop them, make each row a sentence (\"Header: cell; ...\"), or a text "
                        "led by the row's subject (\"Raw Beef — Roll Chance: 100%%; ...\") (default: %(default)s)")


def _index_command(commands: Commands) -> None:
    p = commands.add("index", cmd_index, "build (or rebuild, atomically) a search index from corpora and a server guide")
    p.add_argument("--corpus", action=_CorpusAction, metavar="FILE", dest="corpora",
                   help="corpus JSONL of a wiki (repeatable: several wikis in one index)")
    p.add_argument("--site", action=_CorpusAction, metavar="NAME", dest="corpora",
                   help="the name of the wiki of the --corpus just before it (default: the name its crawl "
                        "recorded); two wikis of one index need different names")
    p.add_argument("--docs", metavar="DIR", default=None,
                   help="your server's own guide: every Markdown file under DIR becomes a page (site "
                        "\"server guide\"), preferred to the wiki when both answer about equally")
    p.add_argument("--docs-url", metavar="BASE", default=None,
                   help="the guide's address on your server's site: a page's link is BASE + its file's path "
                        "without .md (home.md -> BASE/home), unless its front matter gives a url "
                        "(default: none; replies name the page and the guide)")
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")
    p.add_argument("--profile", choices=INDEX_PROFILES, default="tuned",
                   help="tuned: every passage (paragraph, list item, table row) by BM25F over title, section "
                        "and text fused with the passage encoder's vectors (default); lexical: the same BM25F "
                        "alone, no vectors (no encoder: quicker to build, smaller); pages: v0.5's pages, BM25F "
                        "fused with a vector per page; baseline: the original's content-only BM25")
    p.add_argument("--procs", type=positive, default=None, metavar="N", help="indexing processes (default: all cores)")
    words = p.add_mutually_exclusive_group()
    words.add_argument("--glossary", metavar="FILE", default=None,
                       help="your players' own words for wiki names (TSV: 'name<TAB>their word<TAB>wiki name'), "
                            "searched with over the bundled ones; kept by later builds of the index")
    words.add_argument("--no-glossary", action="store_true", help="remove the index's own players' words")


def _search_command(commands: Commands) -> None:
    p = commands.add("search", cmd_search, "show the top pages for a query")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("-k", type=positive, default=Config().top_k, metavar="N", help="number of pages (default: %(default)s)")
    p.add_argument("--json", action="store_true", help='print [{"title": ..., "score": ..., "url": ..., "site": ...}]')
