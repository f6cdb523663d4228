"""The real-wiki test bed served as minecraft.wiki serves it, and crawled: section paths, page kinds,
tables and redirects survive. Skipped where ../shared/realwiki is absent. The bed's text is read at
run time only; these tests name a few page titles and compare the crawl with the bed itself."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from crawler import CrawlSettings, crawl, read_corpus
from crawler.extract import clean_text, extract_article
from jarvis.realbed import RealBed, RealBedSite
from jarvis.realbed.site import ROBOTS_TXT
from jarvis.samplewiki.titles import url_path

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
    assert {title: page.kind for title, page in pages.items()} == expected
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
    from jarvis.realbed.site import is_navbox

    title = next(t for t, p in sorted(realbed.pages.items()) if not t.startswith("Tutorials/")
                 and any(kind == "table" and is_navbox(v) for s in p.sections for kind, v in s.blocks))
    site = RealBedSite(realbed, "http://127.0.0.1:1")
    html = site.respond(url_path(title)).body
    assert BeautifulSoup(html, "lxml").select(".mw-parser-output .navbox .navbox-group")
    article = extract_article(html, "http://127.0.0.1:1" + url_path(title), tables="text")
    groups = {clean_text(v[1][0]) for s in realbed.pages[title].sections for kind, v in s.blocks
              if kind == "table" and is_navbox(v)}
    assert not [p for p in article.paragraphs if any(p.startswith(g + " — ") for g in groups)]
