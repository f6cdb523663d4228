"""Interrupted crawls resume without refetching or losing pages; recrawls use conditional requests."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jarvis.crawler import CrawlSettings, crawl, read_corpus
from crawler_site import LocalSite, Reply, article_path, link

REPO = Path(__file__).resolve().parents[1]
N_ARTICLES = 60


def build_chain_site(site: LocalSite) -> None:
    """60 articles, each linking the next three: the crawl finds them a few at a time."""
    site.add("/robots.txt", Reply(body=b"User-agent: *\nDisallow:\n", headers={"Content-Type": "text/plain"}))
    site.add_article("Main Page", [link("Article 0"), link("Workbench")], main_page=True)
    for i in range(N_ARTICLES):
        nexts = " ".join(link(f"Article {j}") for j in range(i + 1, min(i + 4, N_ARTICLES)))
        site.add_article(f"Article {i}", [f"<b>Article {i}</b> is page number {i}.", f"See also {nexts}."],
                         items=(f"fact {i}a", f"fact {i}b"))
    site.add(article_path("Workbench"), Reply(301, headers={"Location": article_path("Article 7")}))


def corpus_view(path: Path) -> list[tuple]:
    """A corpus, with the URL's host and port left out (runs use different servers)."""
    return [(p.title, tuple(p.aliases), tuple(p.paragraphs), p.sha1, p.url.split("/", 3)[3]) for p in read_corpus(path)]


def cli_crawl_command(base_url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "jarvis", "crawl", "--start", f"{base_url}/w/Main_Page", "--out", str(out),
            "--delay", "0.02", "--workers", "2", "-q", *extra]


def _default_sigint() -> None:
    # A signal the test process ignores stays ignored in its children: Ctrl-C must work as in a shell.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli_crawl(base_url: str, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(cli_crawl_command(base_url, out, *extra), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def wait_for_journal_lines(journal: Path, process: subprocess.Popen, lines: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if journal.is_file() and journal.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)
    pytest.fail(f"the crawl did not reach {lines} journal lines (exit status {process.poll()})")


@pytest.fixture(scope="module")
def reference_corpus(tmp_path_factory) -> list[tuple]:
    out = tmp_path_factory.mktemp("reference") / "corpus.jsonl"
    with LocalSite() as site:
        build_chain_site(site)
        crawl(site.base_url + "/w/Main_Page", out, CrawlSettings(delay=0), progress=False)
    view = corpus_view(out)
    assert len(view) == N_ARTICLES
    assert [aliases for title, aliases, *_ in view if title == "Article 7"] == [("Workbench",)]
    return view


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_interrupted_crawl_resumes_to_the_same_corpus(tmp_path, reference_corpus, how):
    out = tmp_path / "corpus.jsonl"
    journal = tmp_path / "corpus.jsonl.journal"
    with LocalSite() as site:
        build_chain_site(site)
        # The later articles answer slowly until the signal: however busy the machine, the crawl is
        # still running when the signal comes.
        late = [site.routes[article_path(f"Article {i}")] for i in range(30, N_ARTICLES)]
        for reply in late:
            reply.delay = 2.0
        process = start_cli_crawl(site.base_url, out)
        wait_for_journal_lines(journal, process, 15)
        process.send_signal(getattr(signal, how))
        _, stderr = process.communicate(timeout=60)
        for reply in late:
            reply.delay = 0.0
        if how == "SIGINT":
            assert process.returncode == 130 and "interrupted" in stderr
        else:
            assert process.returncode == -signal.SIGKILL
            with journal.open("ab") as fh:  # as if it died in the middle of writing a line
                fh.write(b'{"url": "http://127.0.0.1/w/Art')
        assert not out.exists()
        done = [json.loads(line)["url"] for line in journal.read_text().splitlines()[1:] if line.endswith("}")]
        assert len(done) >= 14

        before = len(site.requests)
        # One resumed crawl (starting a Popen only for its .args ran a second one on the same files).
        resumed = subprocess.run(cli_crawl_command(site.base_url, out, "--resume"), cwd=REPO,
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        refetched = {r.path for r in site.requests[before:]} & {"/" + u.split("/", 3)[3] for u in done}
    assert not refetched, "pages finished before the interruption were fetched again"
    assert "replayed from the interrupted crawl" in resumed.stdout
    assert corpus_view(out) == reference_corpus
    assert not journal.exists()


def test_resume_without_a_journal_starts_a_new_crawl(tmp_path, reference_corpus):
    with LocalSite() as site:
        build_chain_site(site)
        crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", CrawlSettings(delay=0), resume=True,
              progress=False)
    assert corpus_view(tmp_path / "c.jsonl") == reference_corpus


def test_recrawl_sends_conditional_requests_and_updates_changed_pages(tmp_path):
    out = tmp_path / "corpus.jsonl"
    settings = CrawlSettings(delay=0)
    with LocalSite() as site:
        build_chain_site(site)
        first = crawl(site.base_url + "/w/Main_Page", out, settings, progress=False)
        original = corpus_view(out)

        mark = len(site.requests)
        second = crawl(site.base_url + "/w/Main_Page", out, settings, progress=False)
        articles = [r for r in site.requests[mark:] if r.path.startswith("/w/Article_")]
        assert len(articles) == N_ARTICLES
        assert all("If-None-Match" in r.headers and "If-Modified-Since" in r.headers for r in articles)
        assert second.not_modified == N_ARTICLES
        assert corpus_view(out) == original
        assert second.bytes < first.bytes / 3

        site.add_article("Article 5", ["<b>Article 5</b> was rewritten.", link("Article 60")])
        site.add_article("Article 60", ["<b>Article 60</b> is new."])
        del site.routes[article_path("Article 59")]
        third = crawl(site.base_url + "/w/Main_Page", out, settings, progress=False)
    pages = {p.title: p for p in read_corpus(out)}
    assert pages["Article 5"].paragraphs == ["Article 5 was rewritten.", "Article 60"]
    assert pages["Article 60"].paragraphs == ["Article 60 is new."]
    assert "Article 59" not in pages  # deleted from the wiki: 404
    assert tuple(pages["Article 4"].paragraphs) == dict((t, p) for t, _, p, *_ in original)["Article 4"]
    assert third.not_modified == N_ARTICLES - 2 and third.stored == N_ARTICLES
    assert third.skipped["HTTP 404"] == 1


def test_recrawl_after_the_corpus_was_deleted_fetches_everything_again(tmp_path):
    out = tmp_path / "corpus.jsonl"
    with LocalSite() as site:
        build_chain_site(site)
        crawl(site.base_url + "/w/Main_Page", out, CrawlSettings(delay=0), progress=False)
        original = corpus_view(out)
        os.remove(out)  # the state file alone cannot give back the paragraphs
        report = crawl(site.base_url + "/w/Main_Page", out, CrawlSettings(delay=0), progress=False)
    assert report.not_modified == 0
    assert corpus_view(out) == original
