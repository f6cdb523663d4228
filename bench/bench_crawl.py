"""Benchmark of the crawler on the bundled sample wiki: crawl speed, recrawl traffic, requests.

    python bench/bench_crawl.py                 # 2 cores, 4 workers, 3 rounds
    python bench/bench_crawl.py --cpus 0 --workers 8 --rounds 1

Serves the sample wiki from a separate process (as a real wiki is another machine), crawls it
with --delay 0 into a temporary directory by following links, then crawls it again (conditional
requests). Then counts requests (an in-process sample wiki, so that pages can be edited between
crawls): a full crawl through the MediaWiki API, ``--update`` after N edited pages, ``--update``
after no change. Prints figures, asserts nothing. Targets on 2 cores: >= 30 pages/s; a recrawl
of the unchanged site transfers < 10% of the bytes of the first crawl; through the API <= 1.15
requests per stored page; an update after N edits <= N + 5 requests, after none <= 5.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


import requests  # noqa: E402

from jarvis_lab.bench.local_wiki import start_local_wiki  # noqa: E402

from jarvis.crawler import CrawlSettings, crawl  # noqa: E402


def start_server() -> tuple[subprocess.Popen, str]:
    return start_local_wiki("sample-wiki")


def round_trip_ms(base_url: str, n: int = 20) -> float:
    """Median time of one keep-alive GET of an article: the server's share of a page."""
    with requests.Session() as session:
        times = []
        for _ in range(n):
            began = time.perf_counter()
            session.get(f"{base_url}/w/Cow").content
            times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def request_figures(workers: int, edits: int) -> None:
    """Requests per stored page by links and through the API; requests of --update."""
    from jarvis_lab.samplewiki import start_sample_wiki

    server, base_url = start_sample_wiki(port=0)
    start = f"{base_url}/w/Main_Page"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            links = crawl(start, Path(tmp) / "links.jsonl", CrawlSettings(delay=0, workers=workers, use_api=False),
                          progress=False)
            out = Path(tmp) / "api.jsonl"
            api = crawl(start, out, CrawlSettings(delay=0, workers=workers), progress=False)
            print(f"by links: {links.requests} requests for {links.stored} pages = "
                  f"{links.requests / links.stored:.2f} requests per stored page")
            print(f"through the API: {api.requests} requests for {api.stored} pages = "
                  f"{api.requests / api.stored:.2f} requests per stored page (target <= 1.15), "
                  f"{api.bytes / 1e6:.2f} MB")
            quiet = crawl(start, out, CrawlSettings(delay=0, workers=workers), progress=False, update=True)
            titles = sorted(p.title for p in __import__("crawler").read_corpus(out))[::7][:edits]
            for title in titles:
                server.site.edit(title, f"The **{title.lower()}** page was edited for the benchmark.")
            update = crawl(start, out, CrawlSettings(delay=0, workers=workers), progress=False, update=True)
            print(f"--update after no change: {quiet.requests} requests (target <= 5)")
            print(f"--update after {len(titles)} edited pages: {update.requests} requests, {update.visited} pages "
                  f"fetched (target <= {len(titles) + 5})")
    finally:
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, default=2, help="pin crawler and server to this many cores (0: all)")
    parser.add_argument("--workers", type=int, default=CrawlSettings().workers, help="fetch threads")
    parser.add_argument("--rounds", type=int, default=3, help="crawl + recrawl rounds (median reported)")
    parser.add_argument("--edits", type=int, default=10, help="pages edited before the measured --update")
    args = parser.parse_args()

    if args.cpus and hasattr(os, "sched_setaffinity"):
        available = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, set(available[:args.cpus]))  # the server process inherits it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    server, base_url = start_server()
    try:
        settings = CrawlSettings(delay=0, workers=args.workers, use_api=False)
        print(f"sample wiki at {base_url} (own process); {cores} cores; {args.workers} workers; "
              f"server round trip {round_trip_ms(base_url):.1f} ms")
        rates, ratios = [], []
        for round_ in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "corpus.jsonl"
                first = crawl(f"{base_url}/w/Main_Page", out, settings, progress=False)
                second = crawl(f"{base_url}/w/Main_Page", out, settings, progress=False)
            rates.append(first.pages_per_second)
            ratios.append(second.bytes / first.bytes)
            print(f"round {round_}: crawl {first.visited} URLs -> {first.stored} pages + {first.aliases} aliases "
                  f"in {first.seconds:.2f} s = {first.pages_per_second:.1f} pages/s, {first.bytes / 1e6:.2f} MB; "
                  f"recrawl {second.seconds:.2f} s, {second.not_modified} not modified, "
                  f"{second.bytes / 1e6:.3f} MB = {ratios[-1]:.1%} of the first")
        print(f"crawl speed: {statistics.median(rates):.1f} pages/s (median of {args.rounds}; target >= 30 on 2 cores)")
        print(f"recrawl traffic: {statistics.median(ratios):.1%} of the first crawl's bytes (target < 10%)")
        request_figures(args.workers, args.edits)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
