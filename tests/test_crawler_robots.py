"""robots.txt per RFC 9309 (Protego): wildcards, "$" anchors, per-agent groups, Crawl-delay.

The standard library's parser ignores wildcards and fetched /w/Gold_farm_(classified) under
"Disallow: /w/*_(classified)". Here nothing robots.txt disallows is ever requested.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from jarvis.crawler import CrawlSettings, crawl, read_corpus
from jarvis.crawler.settings import POLITE_DELAY
from jarvis.crawler.throttle import Throttle
from jarvis.crawler.urls import is_loopback
from crawler_site import LocalSite, Reply, link

ROBOTS = b"""User-agent: *
Disallow: /w/*_(classified)
Disallow: /w/Secret$
Disallow: /w/*?
Crawl-delay: 0.2

User-agent: JarvisBot
Disallow: /w/*_(classified)
Disallow: /w/Secret$
Allow: /w/Secret_base
Disallow: /w/Private

User-agent: BadBot
Disallow: /
"""
FORBIDDEN = ["/w/Gold_farm_(classified)", "/w/Iron_farm_(classified)", "/w/Secret", "/w/Private_notes"]


def build_site(site: LocalSite) -> None:
    site.add("/robots.txt", Reply(body=ROBOTS, headers={"Content-Type": "text/plain"}))
    titles = ["Gold farm (classified)", "Iron farm (classified)", "Secret", "Secret base", "Private notes", "Cow",
              "Classified"]
    site.add_article("Main Page", [" ".join(link(t) for t in titles)], main_page=True)
    for title in titles:
        site.add_article(title, [f"The <b>{title}</b> page."])


def test_nothing_disallowed_is_requested_wildcards_and_anchors_included(tmp_path):
    with LocalSite() as site:
        build_site(site)
        report = crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", CrawlSettings(delay=0), progress=False)
        paths = site.paths()
    assert not [p for p in paths if p in FORBIDDEN]
    # "$" ends the rule: /w/Secret is out, /w/Secret_base is in; the JarvisBot group applies, not "*".
    assert {"/w/Secret_base", "/w/Cow", "/w/Classified"} <= set(paths)
    assert sorted(p.title for p in read_corpus(tmp_path / "c.jsonl")) == ["Classified", "Cow", "Secret base"]
    assert report.skipped["robots.txt"] == len(FORBIDDEN)


@contextmanager
def _site_with_crawl_delay():
    """A local wiki of three pages whose robots.txt asks every agent for a 0.3 s crawl delay."""
    with LocalSite() as site:
        site.add("/robots.txt", Reply(body=b"User-agent: *\nCrawl-delay: 0.3\n", headers={"Content-Type": "text/plain"}))
        site.add_article("Main Page", [link("Cow"), link("Pig")], main_page=True)
        site.add_article("Cow", ["A <b>cow</b>."])
        site.add_article("Pig", ["A <b>pig</b>."])
        yield site


def test_crawl_delay_of_the_agents_group_spaces_requests(tmp_path):
    with _site_with_crawl_delay() as site:
        crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", CrawlSettings(delay=0, workers=4), progress=False)
        times = sorted(r.at for r in site.requests)
    assert len(times) == 4
    # robots.txt, then three pages 0.3 s apart (start to start): two gaps at least.
    assert times[-1] - times[1] >= 2 * 0.3 * 0.9


def test_a_wiki_on_this_machine_waits_for_no_crawl_delay_unless_a_delay_is_given(tmp_path):
    with _site_with_crawl_delay() as site:
        default = crawl(site.base_url + "/w/Main_Page", tmp_path / "a.jsonl", CrawlSettings(), progress=False)
        given = crawl(site.base_url + "/w/Main_Page", tmp_path / "b.jsonl", CrawlSettings(delay=0.1), progress=False)
    assert (default.local, default.delay) == (True, 0.0)          # 127.0.0.1: its Crawl-delay is not waited for
    assert (given.local, given.delay) == (True, 0.3)              # a delay given is raised by it, as anywhere
    assert "0.3 s apart (the wiki is on this machine)" in given.summary()
    for out in ("a.jsonl", "b.jsonl"):
        assert sorted(page.title for page in read_corpus(tmp_path / out)) == ["Cow", "Pig"]


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1:8080", True), ("127.1.2.3", True), ("localhost", True), ("LOCALHOST:8080", True),
    ("wiki.localhost", True), ("[::1]:8080", True), ("[::ffff:127.0.0.1]", True),
    ("128.0.0.1", False), ("10.0.0.2:8080", False), ("minecraft.wiki", False), ("localhost.example.com", False),
    ("[::2]", False), ("", False),
])
def test_which_hosts_are_this_machine(host, loopback):
    assert is_loopback(host) is loopback


def test_remote_hosts_keep_the_polite_delay_and_their_crawl_delay():
    stop = threading.Event()
    auto, given = Throttle(None, stop), Throttle(0.1, stop)
    assert auto.delay("minecraft.wiki") == POLITE_DELAY and auto.delay("127.0.0.1:8080") == 0.0
    auto.set_delay("minecraft.wiki", 5.0)
    auto.set_delay("127.0.0.1:8080", 5.0)
    assert auto.delay("minecraft.wiki") == 5.0 and auto.delay("127.0.0.1:8080") == 0.0
    auto.set_delay("other.example", 0.2)
    assert auto.delay("other.example") == POLITE_DELAY                # Crawl-delay only ever raises it
    assert given.delay("minecraft.wiki") == given.delay("localhost") == 0.1
    given.set_delay("localhost", 0.3)
    assert given.delay("localhost") == 0.3


def test_an_agent_shut_out_by_its_group_fetches_nothing_but_robots_txt(tmp_path):
    import pytest

    from jarvis.crawler import CrawlError

    with LocalSite() as site:
        build_site(site)
        with pytest.raises(CrawlError, match="robots.txt"):
            crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl",
                  CrawlSettings(delay=0, user_agent="BadBot/2.0 (+https://example.invalid)"), progress=False)
        assert site.paths() == ["/robots.txt"]
