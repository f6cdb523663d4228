"""Crawling through the MediaWiki Action API: the sample wiki serves api.php (wikis/actionapi).

A full crawl through the API costs about one request per stored article and gives the same
corpus as following links; --update after N changed pages costs at most N + 5 requests and
gives what a full crawl of the changed wiki gives; after no change, at most 5 requests.
"""
from __future__ import annotations

import pytest

from jarvis.crawler import CrawlSettings, crawl, read_corpus
from crawler_site import LocalSite, Reply

FAST = CrawlSettings(delay=0, retries=2, backoff=0.05, max_retry_after=2.0)


def corpus_view(path) -> list[tuple]:
    """A corpus without the host and port in URLs (a second server may serve the same wiki)."""
    return sorted((p.title, tuple(sorted(p.aliases)), tuple(p.paragraphs), p.sha1, p.url.split("/", 3)[3])
                  for p in read_corpus(path))


@pytest.fixture()
def sample_wiki():
    from jarvis_lab.samplewiki import start_sample_wiki

    server, base_url = start_sample_wiki(port=0)
    yield server, base_url
    server.shutdown()


@pytest.fixture(scope="module")
def link_corpus(tmp_path_factory):
    from jarvis_lab.samplewiki import start_sample_wiki

    server, base_url = start_sample_wiki(port=0)
    out = tmp_path_factory.mktemp("links") / "corpus.jsonl"
    report = crawl(base_url + "/w/Main_Page", out, CrawlSettings(delay=0, use_api=False), progress=False)
    server.shutdown()
    assert report.api is None
    return report, corpus_view(out)


def test_api_crawl_gives_the_link_crawls_corpus_with_a_third_of_the_requests(sample_wiki, link_corpus, tmp_path):
    server, base_url = sample_wiki
    out = tmp_path / "corpus.jsonl"
    report = crawl(base_url + "/w/Main_Page", out, FAST, progress=False)
    links_report, links_view = link_corpus
    assert report.api == base_url + "/api.php"
    assert corpus_view(out) == links_view
    assert report.stored == links_report.stored == 168   # 160 articles and 8 pages of spin-off namespaces
    assert report.requests / report.stored <= 1.15, report.summary()
    assert report.requests < links_report.requests / 2
    assert "requests per stored page" in report.summary()


def test_update_fetches_only_what_changed_and_equals_a_full_crawl(sample_wiki, tmp_path):
    server, base_url = sample_wiki
    out = tmp_path / "corpus.jsonl"
    crawl(base_url + "/w/Main_Page", out, FAST, progress=False)

    unchanged = crawl(base_url + "/w/Main_Page", out, FAST, progress=False, update=True)
    assert unchanged.requests <= 5 and unchanged.visited == 0 and unchanged.changes == 0

    site = server.site
    edited = ["Cow", "Sheep", "Bow"]
    for title in edited:
        site.edit(title, f"A **{title.lower()}** was changed by an editor. It now says this.")
    site.move("Pig", "Hog")                     # old title becomes a redirect, aliases move along
    site.delete("Anvil")                        # the page and its redirects go
    site.create("Copper golem", "A **copper golem** is a new mob.", group="mobs", categories=("Passive mobs",))
    changed_pages = len(edited) + 2             # + the moved page and the new one

    report = crawl(base_url + "/w/Main_Page", out, FAST, progress=False, update=True)
    assert report.requests <= changed_pages + 5, report.summary()
    assert report.visited == changed_pages and report.removed >= 1

    full = tmp_path / "full.jsonl"
    crawl(base_url + "/w/Main_Page", full, FAST, progress=False)
    assert corpus_view(out) == corpus_view(full)
    pages = {p.title: p for p in read_corpus(out)}
    assert "Anvil" not in pages and "Pig" not in pages
    assert {"Pig", "Pigs"} <= set(pages["Hog"].aliases)
    assert pages["Cow"].paragraphs[0].startswith("A cow was changed by an editor.")

    again = crawl(base_url + "/w/Main_Page", out, FAST, progress=False, update=True)
    assert again.requests <= 5 and again.visited == 0


def test_update_without_an_earlier_crawl_is_a_one_line_user_error(sample_wiki, tmp_path):
    from jarvis.crawler import CrawlError

    _, base_url = sample_wiki
    with pytest.raises(CrawlError, match="needs an earlier crawl"):
        crawl(base_url + "/w/Main_Page", tmp_path / "corpus.jsonl", FAST, progress=False, update=True)


def test_maxlag_is_honoured_with_retry_after(sample_wiki, tmp_path):
    server, base_url = sample_wiki
    store = server.site.store
    asked: list[float] = []
    lag = iter([8.0, 0.0])
    original = store.lag

    def lagging() -> float:   # lagged on the first API request, then caught up
        import time

        asked.append(time.monotonic())
        return next(lag, 0.0)

    store.lag = lagging
    try:
        settings = CrawlSettings(delay=0, retries=2, max_retry_after=5.0)
        report = crawl(base_url + "/w/Main_Page", tmp_path / "corpus.jsonl", settings, progress=False)
    finally:
        store.lag = original
    assert report.api is not None and report.stored == 168
    assert report.retries >= 1
    assert asked[1] - asked[0] >= 4.5        # Retry-After: 5 (maxlag=5)


def test_a_site_without_an_api_is_crawled_by_links(tmp_path):
    with LocalSite() as site:
        site.add("/robots.txt", Reply(body=b"User-agent: *\nDisallow:\n", headers={"Content-Type": "text/plain"}))
        # The page says it is MediaWiki but names no api.php: one probe, a 404, then links.
        generator = '<meta name="generator" content="MediaWiki 1.43.1">'
        from crawler_site import article_html, link

        html = article_html("Main Page", [link("Cow")], main_page=True).replace("<head>", "<head>" + generator)
        site.add("/w/Main_Page", Reply(body=html.encode(), headers={"Content-Type": "text/html; charset=UTF-8"}))
        site.add_article("Cow", ["A <b>cow</b> gives milk."])
        report = crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", FAST, progress=False)
        paths = site.paths()
    assert report.api is None and report.stored == 1
    assert sum(p.startswith("/api.php") for p in paths) == 1


def test_an_interrupted_api_crawl_resumes_to_the_same_corpus(sample_wiki, link_corpus, tmp_path):
    import re
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    _, base_url = sample_wiki
    out, journal = tmp_path / "corpus.jsonl", tmp_path / "corpus.jsonl.journal"
    command = [sys.executable, "-m", "jarvis", "crawl", "--start", f"{base_url}/w/Main_Page", "--out", str(out),
               "--delay", "0.01", "--workers", "2", "-q"]
    repo = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if journal.is_file() and journal.read_bytes().count(b"\n") >= 40:
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert not out.exists() and journal.is_file()
    resumed = subprocess.run(command + ["--resume"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    replayed = int(re.search(r"(\d+) more replayed", resumed.stdout).group(1))
    visited = int(re.search(r"visited (\d+) URLs", resumed.stdout).group(1))
    assert replayed >= 39 and replayed + visited == 176   # no page fetched twice (8 of spin-off namespaces)
    assert corpus_view(out) == link_corpus[1]


def test_cli_update_brings_the_index_up_to_date(sample_wiki, tmp_path, capsys):
    from jarvis.cli import main

    server, base_url = sample_wiki
    out, index_dir = tmp_path / "corpus.jsonl", tmp_path / "index"
    start = ["crawl", "--start", f"{base_url}/w/Main_Page", "--out", str(out), "--delay", "0", "-q"]
    assert main(start + ["--index", str(index_dir)]) == 0
    server.site.edit("Cow", "A **cow** now gives chocolate milk, says this edit.")
    capsys.readouterr()
    assert main(start + ["--update", "--index", str(index_dir)]) == 0
    printed = capsys.readouterr().out
    assert "update through" in printed and "1 pages fetched" in printed
    assert "1 updated" in printed and "167 unchanged" in printed    # incremental: only the changed page
    assert main(start + ["--update"]) == 0
    assert "jarvis index --corpus" in capsys.readouterr().out


def test_a_page_that_fails_during_an_update_is_kept_and_tried_again(sample_wiki, tmp_path):
    from jarvis_lab.samplewiki.server import Response

    server, base_url = sample_wiki
    out = tmp_path / "corpus.jsonl"
    crawl(base_url + "/w/Main_Page", out, FAST, progress=False)
    before = {p.title: p for p in read_corpus(out)}["Cow"]
    site = server.site
    site.edit("Cow", "A **cow** was edited while the server had trouble.")
    respond = site.respond
    site.respond = lambda target: Response(503, b"busy") if target == "/w/Cow" else respond(target)
    try:
        failing = crawl(base_url + "/w/Main_Page", out, FAST, progress=False, update=True)
    finally:
        site.respond = respond
    assert failing.skipped["HTTP 503"] == 1
    assert {p.title: p for p in read_corpus(out)}["Cow"].paragraphs == before.paragraphs   # nothing lost
    again = crawl(base_url + "/w/Main_Page", out, FAST, progress=False, update=True)
    assert again.visited == 1
    assert {p.title: p for p in read_corpus(out)}["Cow"].paragraphs[0].startswith("A cow was edited while")


@pytest.mark.parametrize("start", ["/w/Cow", "/w/Cows"])
def test_the_start_page_does_not_change_the_corpus(sample_wiki, link_corpus, tmp_path, start):
    _, base_url = sample_wiki
    report = crawl(base_url + start, tmp_path / "corpus.jsonl", FAST, progress=False)
    assert report.api is not None
    assert corpus_view(tmp_path / "corpus.jsonl") == link_corpus[1]
