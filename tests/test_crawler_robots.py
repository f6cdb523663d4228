"""robots.txt per RFC 9309 (Protego): wildcards, "$" anchors, per-agent groups, Crawl-delay.

The standard library's parser ignores wildcards and fetched /w/Gold_farm_(classified) under
"Disallow: /w/*_(classified)". Here nothing robots.txt disallows is ever requested.
"""
from __future__ import annotations

from crawler import CrawlSettings, crawl, read_corpus
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


def test_crawl_delay_of_the_agents_group_spaces_requests(tmp_path):
    robots = b"User-agent: *\nCrawl-delay: 0.3\n"
    with LocalSite() as site:
        site.add("/robots.txt", Reply(body=robots, headers={"Content-Type": "text/plain"}))
        site.add_article("Main Page", [link("Cow"), link("Pig")], main_page=True)
        site.add_article("Cow", ["A <b>cow</b>."])
        site.add_article("Pig", ["A <b>pig</b>."])
        crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", CrawlSettings(delay=0, workers=4), progress=False)
        times = sorted(r.at for r in site.requests)
    assert len(times) == 4
    # robots.txt, then three pages 0.3 s apart (start to start): two gaps at least.
    assert times[-1] - times[1] >= 2 * 0.3 * 0.9


def test_an_agent_shut_out_by_its_group_fetches_nothing_but_robots_txt(tmp_path):
    import pytest

    from crawler import CrawlError

    with LocalSite() as site:
        build_site(site)
        with pytest.raises(CrawlError, match="robots.txt"):
            crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl",
                  CrawlSettings(delay=0, user_agent="BadBot/2.0 (+https://example.invalid)"), progress=False)
        assert site.paths() == ["/robots.txt"]
