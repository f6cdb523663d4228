"""The real-wiki test bed served as minecraft.wiki serves it, and crawled: section paths, page kinds,
tables and redirects survive. Skipped where ../shared/realwiki is absent. The bed's text is read at
run time only; these tests name a few page titles and compare the crawl with the bed itself."""
from __future__ import annotations

import json
import re
from urllib.parse import quote, urlsplit

import pytest
from bs4 import BeautifulSoup

from jarvis.crawler import CrawlSettings, crawl, read_corpus
from jarvis.crawler.extract import clean_text, extract_article
from jarvis.config import SAMPLE_WIKI_HOST
from jarvis_lab.realbed import RealBed, RealBedServer, RealBedSite
from jarvis_lab.realbed.site import ROBOTS_TXT
from jarvis_lab.samplewiki.titles import url_path

# One page of each kind (titles only), and the kind the crawler must give it.
SUBSET = {
    "Cow": "article", "Diamond Ore": "article", "Raid captain": "article", "Tutorials/Safe home": "tutorial",
    "Villager (old)": "removed", "Potone Copper Ore": "joke", "Java Edition 1.19.3": "version",
    "Minecraft  Dungeons:Battlestaff": "spinoff", "Stone (disambiguation)": None,   # None: not stored
}
_REFERENCE = re.compile(r"\[(?:\d{1,3}|[a-z]|note \d{1,3}|n \d{1,3})\]")


@pytest.fixture(scope="module")
def subset(realbed):
    missing = [title for title in SUBSET if title not in realbed.pages]
    if missing:
        pytest.skip(f"the test bed lacks {missing}")
    return RealBed({title: realbed.pages[title] for title in SUBSET}, mtime=realbed.mtime)


@pytest.fixture(scope="module")
def crawled(subset, serve_realbed, tmp_path_factory):
    out = tmp_path_factory.mktemp("realbed") / "corpus.jsonl"
    report = crawl(serve_realbed(subset) + "/w/Main_Page", out, CrawlSettings(delay=0, tables="text"), progress=False)
    return report, {" ".join(page.title.split()): page for page in read_corpus(out)}


def test_a_crawl_of_the_mirror_stores_each_page_with_its_kind(crawled):
    report, pages = crawled
    expected = {" ".join(title.split()): kind for title, kind in SUBSET.items() if kind}
    assert {title: page.page_kind for title, page in pages.items()} == expected
    assert report.skipped["disambiguation"] == 1 and report.skipped["main page"] == 1


def test_a_crawl_of_the_mirror_keeps_every_paragraph_with_its_section_path(crawled, subset):
    _, pages = crawled
    for title, bed_page in subset.pages.items():
        if SUBSET[title] is None:
            continue
        got = set(zip(pages[" ".join(title.split())].paragraphs, map(tuple, pages[" ".join(title.split())].sections)))
        for section in bed_page.sections:
            for kind, text in section.blocks:
                if kind in ("p", "li") and clean_text(_REFERENCE.sub("", text)):
                    assert (clean_text(_REFERENCE.sub("", text)), section.path) in got, (title, section.path, kind)
    cow = pages["Cow"]
    assert cow.sections[0] == [] and ["Drops", "On death"] in cow.sections


def test_hatnotes_captions_infobox_navbox_and_footer_stay_out(crawled, subset):
    _, pages = crawled
    hatnotes = {clean_text(text) for page in subset.pages.values() for section in page.sections
                for kind, text in section.blocks if kind == "hatnote"}
    for page in pages.values():
        assert not hatnotes & set(page.paragraphs), page.title
        assert not [p for p in page.paragraphs if p.startswith(("Picture of ", "Nearby pages", "Sections", "This page "
                                                                "was last edited", "Reference "))], page.title


def test_table_rows_become_citable_text_in_their_section(crawled):
    _, pages = crawled
    cow = pages["Cow"]
    rows = [(text, path) for text, path in zip(cow.paragraphs, cow.sections) if text.startswith("Raw Beef — ")]
    assert rows and rows[0][1] == ["Drops", "On death"]
    assert "1–3" in rows[0][0] and "100%" in rows[0][0]
    assert not any(re.search(r"\[(?:d|note|i) \d+\]", text) for page in pages.values() for text in page.paragraphs)


def test_redirects_serve_the_target_with_redirected_from_and_its_canonical_url(realbed):
    site = RealBedSite(realbed, "http://127.0.0.1:1")
    title, page = next((t, p) for t, p in realbed.pages.items() if p.aliases)
    alias = page.aliases[0]
    soup = BeautifulSoup(site.respond(url_path(alias)).body, "lxml")
    assert f"(Redirected from {alias})" == clean_text(soup.select_one("#contentSub .mw-redirectedfrom").get_text())
    assert urlsplit(soup.find("link", rel="canonical")["href"]).path == url_path(title)
    assert clean_text(soup.select_one("#firstHeading").get_text()) == clean_text(title)


def test_odd_titles_round_trip_and_unknown_titles_are_404(realbed):
    site = RealBedSite(realbed, "http://127.0.0.1:1")
    odd = [title for pattern in ("  ", ":", "/", "'", "(", "_") for title in sorted(realbed.pages) if pattern in title][::7]
    assert len(odd) > 20
    for title in odd:
        response = site.respond(url_path(title))
        assert response.status == 200, title
        soup = BeautifulSoup(response.body, "lxml")
        assert clean_text(soup.select_one("#firstHeading").get_text()) == clean_text(title)
        assert soup.select_one("#mw-content-text > .mw-parser-output") is not None
    assert site.respond("/w/No_such_page_in_the_bed").status == 404
    main = BeautifulSoup(site.respond("/w/Main_Page").body, "lxml")
    linked = {a["href"] for a in main.select(".mw-parser-output a[href]")}
    assert {url_path(t) for t in realbed.pages} <= linked


def test_robots_txt_has_wildcard_rules():
    assert "Disallow: /*?action=" in ROBOTS_TXT and "Disallow: /w/Special:*" in ROBOTS_TXT


def test_navboxes_the_bed_saved_as_tables_are_served_as_navboxes_and_are_not_content(realbed):
    from jarvis_lab.realbed.site import is_navbox

    title = next(t for t, p in sorted(realbed.pages.items()) if not t.startswith("Tutorials/")
                 and any(kind == "table" and is_navbox(v) for s in p.sections for kind, v in s.blocks))
    site = RealBedSite(realbed, "http://127.0.0.1:1")
    html = site.respond(url_path(title)).body
    assert BeautifulSoup(html, "lxml").select(".mw-parser-output .navbox .navbox-group")
    article = extract_article(html, "http://127.0.0.1:1" + url_path(title), tables="text")
    groups = {clean_text(v[1][0]) for s in realbed.pages[title].sections for kind, v in s.blocks
              if kind == "table" and is_navbox(v)}
    assert not [p for p in article.paragraphs if any(p.startswith(g + " — ") for g in groups)]


# ---------------------------------------------------------------------------- the mirror's api.php

API_STRIDE = 13    # the API tests crawl one page in this many (in title order) and SUBSET: about 150 pages


def corpus_text(path) -> list[tuple]:
    """A corpus without its aliases (the link crawl sees only the aliases the Main Page links) and
    without host and port."""
    return sorted((p.url.split("/", 3)[3], p.title, p.page_kind, tuple(p.paragraphs), tuple(map(tuple, p.sections)), p.sha1)
                  for p in read_corpus(path))


@pytest.fixture()
def api_subset(realbed):
    titles = sorted(realbed.pages, key=str.casefold)[::API_STRIDE] + [t for t in SUBSET if t in realbed.pages]
    return RealBed({title: realbed.pages[title] for title in titles}, mtime=realbed.mtime)


def test_an_api_crawl_of_the_mirror_gives_the_link_crawls_corpus_at_one_request_per_article(api_subset, serve_realbed,
                                                                                            tmp_path):
    base_url = serve_realbed(api_subset)
    links = crawl(base_url + "/w/Main_Page", tmp_path / "links.jsonl", CrawlSettings(delay=0, use_api=False),
                  progress=False)
    api = crawl(base_url + "/w/Main_Page", tmp_path / "api.jsonl", CrawlSettings(delay=0), progress=False)
    assert links.api is None and api.api == base_url + "/api.php"
    assert corpus_text(tmp_path / "api.jsonl") == corpus_text(tmp_path / "links.jsonl")
    assert api.stored == links.stored > 100
    assert api.requests / api.stored <= 1.15, api.summary()
    # Every alias of the bed, without a redirect page fetched; the link crawl has those the Main Page links.
    aliases = {page.title: set(page.aliases) for page in read_corpus(tmp_path / "api.jsonl")}
    linked = {page.title: set(page.aliases) for page in read_corpus(tmp_path / "links.jsonl")}
    expected = {" ".join(title.split()): {alias for t, alias in api_subset.by_key.values() if t == title and alias}
                for title in api_subset.pages}
    assert all(aliases[title] == expected[title] and linked[title] <= aliases[title] for title in aliases)
    assert sum(map(len, aliases.values())) > sum(map(len, linked.values()))


def test_an_update_of_the_mirror_fetches_only_what_changed_and_equals_a_full_crawl(api_subset, tmp_path):
    server = RealBedServer(SAMPLE_WIKI_HOST, 0, api_subset)   # its own: this test changes the bed
    server.serve_in_thread("realbed-wiki")
    try:
        check_an_update(server.site, server.base_url, tmp_path)
    finally:
        server.shutdown()


def check_an_update(site: RealBedSite, base_url: str, tmp_path) -> None:
    settings = CrawlSettings(delay=0)
    out = tmp_path / "corpus.jsonl"
    crawl(base_url + "/w/Main_Page", out, settings, progress=False)
    unchanged = crawl(base_url + "/w/Main_Page", out, settings, progress=False, update=True)
    assert unchanged.requests <= 5 and unchanged.visited == 0 and unchanged.changes == 0

    site.edit("Cow", "A cow was changed by an editor in this test.\nIt now says two things.")
    site.edit("Raid captain", "A raid captain was changed too.")
    site.edit("Minecraft  Dungeons:Battlestaff", "A page of a spin-off namespace, changed.")
    site.delete("Diamond Ore")                       # the page and its alias go
    report = crawl(base_url + "/w/Main_Page", out, settings, progress=False, update=True)
    assert report.requests <= 3 + 5, report.summary()
    assert report.visited == 3 and report.removed == 1
    cow = next(page for page in read_corpus(out) if page.title == "Cow")
    assert cow.paragraphs == ["A cow was changed by an editor in this test.", "It now says two things."]
    spin_off = next(page for page in read_corpus(out) if page.title == "Minecraft Dungeons:Battlestaff")
    assert spin_off.paragraphs == ["A page of a spin-off namespace, changed."] and spin_off.page_kind == "spinoff"

    full = tmp_path / "full.jsonl"
    crawl(base_url + "/w/Main_Page", full, settings, progress=False)
    assert corpus_text(out) == corpus_text(full)
    assert sorted((p.title, sorted(p.aliases)) for p in read_corpus(out)) == \
        sorted((p.title, sorted(p.aliases)) for p in read_corpus(full))


def test_the_mirrors_api_lists_aliases_as_redirects_and_the_spin_off_namespaces(realbed):
    site = RealBedSite(realbed, "http://127.0.0.1:1")
    title, page = next((t, p) for t, p in sorted(realbed.pages.items()) if p.aliases)
    answer = json.loads(site.respond("/api.php?action=query&format=json&formatversion=2&redirects=1&prop=info"
                                     f"&titles={quote(page.aliases[0])}").body)
    assert answer["query"]["redirects"] == [{"from": page.aliases[0], "to": title}]
    assert answer["query"]["pages"][0]["title"] == title
    answer = json.loads(site.respond("/api.php?action=query&format=json&formatversion=2&meta=siteinfo"
                                     "&siprop=namespaces&list=allpages&apnamespace=10000&aplimit=max").body)
    assert answer["query"]["namespaces"]["10000"]["name"] == "Minecraft Dungeons"
    assert {p["title"] for p in answer["query"]["allpages"]} == {t for t in realbed.pages
                                                                 if t.startswith("Minecraft  Dungeons:")}
    assert json.loads(site.respond("/api.php?action=query&format=json&formatversion=2&list=recentchanges").body)[
        "query"]["recentchanges"] == []
