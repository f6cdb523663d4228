"""Crawling the bundled sample wiki gives exactly the bundled corpus: same titles, aliases, paragraphs.

The sample wiki has what a real MediaWiki site has around its articles: a Main Page, wiki
redirects, duplicate pages, disambiguation pages, spin-off, talk, user, help and project
namespaces, categories, files and navbox templates. None of those may end up in the corpus
(except the spin-off pages, labelled "spinoff"), and every alias of an article must.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from jarvis.crawler import CrawlSettings, crawl, read_corpus


@pytest.fixture(scope="module")
def sample_wiki():
    from jarvis_lab.samplewiki import start_sample_wiki

    server, base_url = start_sample_wiki(port=0)
    yield base_url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def crawled(sample_wiki, tmp_path_factory):
    """The sample wiki on 127.0.0.1 crawled with the default settings, as `jarvis crawl` without --delay."""
    out = tmp_path_factory.mktemp("samplewiki") / "corpus.jsonl"
    report = crawl(sample_wiki + "/w/Main_Page", out, CrawlSettings(), progress=False)
    return report, {page.title: page for page in read_corpus(out)}


def test_a_wiki_on_this_machine_is_crawled_with_no_delay_by_default(crawled):
    from jarvis.crawler.settings import POLITE_DELAY

    report, _ = crawled
    assert (report.local, report.delay) == (True, 0.0)
    assert "no delay (the wiki is on this machine)" in report.summary()
    # At the polite delay its 180-odd requests would take 3 minutes; without one, seconds.
    assert report.requests > 150 and report.seconds < report.requests * POLITE_DELAY / 4, report.summary()


def test_crawl_of_the_sample_wiki_equals_the_bundled_corpus(crawled, bundled_corpus):
    _, pages = crawled
    expected = {page.title: page for page in read_corpus(bundled_corpus)}
    assert sorted(pages) == sorted(expected)
    for title, page in expected.items():
        got = pages[title]
        assert set(got.aliases) == set(page.aliases), title
        assert got.paragraphs == page.paragraphs, title
        assert got.sections == page.sections, title
        assert (got.page_kind, got.categories) == (page.page_kind, page.categories), title
        assert got.site == page.site == "Minecraft Wiki", title   # siteinfo's sitename, recorded on every page
        assert got.sha1 == page.sha1, title
        assert urlsplit(got.url).path == urlsplit(page.url).path, title


def test_crawl_of_the_sample_wiki_keeps_both_names_of_duplicates(crawled):
    _, pages = crawled
    assert "Crafting Table" in pages["Crafting table"].aliases  # the duplicate copy
    assert "Workbench" in pages["Crafting table"].aliases       # a wiki redirect
    assert "Crafting Table" not in pages and "Workbench" not in pages


def test_crawl_of_the_sample_wiki_keeps_section_paths_and_labels_spin_off_pages(crawled):
    _, pages = crawled
    cow = pages["Cow"]
    assert cow.page_kind == "article" and cow.sections[0] == []
    assert len({tuple(path) for path in cow.sections}) > 1
    spin_offs = {title for title, page in pages.items() if page.page_kind == "spinoff"}
    assert "Minecraft Dungeons:Cow" in spin_offs and "Minecraft Legends:Piglin" in spin_offs
    assert all(":" in title for title in spin_offs)


def test_crawl_of_the_sample_wiki_leaves_out_every_non_article(crawled):
    report, pages = crawled
    assert not [t for t, page in pages.items() if ":" in t and page.page_kind != "spinoff"]
    assert "Main Page" not in pages
    assert report.skipped["main page"] == 1
    assert report.skipped["disambiguation"] >= 1
    assert not [reason for reason in report.skipped if reason.startswith(("HTTP", "timeout", "error"))]
