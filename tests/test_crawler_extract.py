"""Article extraction, page filtering, URLs and deduplication: the parts of the crawler that need no network."""
from __future__ import annotations

import json

import pytest

from jarvis.crawler import CrawlSettings, content_sha1, extract_article, skip_reason
from jarvis.crawler.dedupe import build_pages
from jarvis.crawler.filters import followable_links, page_kind
from jarvis.crawler.journal import Document, FetchRecord
from jarvis.crawler.urls import Scope, normalize_url

BASE = "https://minecraft.wiki"


def page(body: str, *, title: str = "Cow", config: dict | None = None, head: str = "", subtitle: str = "",
         catlinks: str = "") -> str:
    """A MediaWiki page (Vector skin shape) around an article body."""
    rlconf = {"wgNamespaceNumber": 0, "wgPageName": title.replace(" ", "_"), "wgTitle": title,
              "wgIsMainPage": False, "wgArticlePath": "/w/$1", "wgCategories": ["Passive mobs"]}
    rlconf.update(config or {})
    return f"""<!DOCTYPE html><html><head><title>{title}</title>
<script>document.documentElement.className="client-js";RLCONF={json.dumps(rlconf)};RLSTATE={{}};</script>
<link rel="canonical" href="{BASE}/w/{title.replace(' ', '_')}">{head}</head>
<body><div id="mw-navigation"><ul><li><a href="/w/Special:Random">Random page</a></li></ul></div>
<div id="content"><h1 id="firstHeading" class="firstHeading"><span class="mw-page-title-main">{title}</span></h1>
<div id="contentSub"><div id="mw-content-subtitle">{subtitle}</div></div>
<div id="mw-content-text" class="mw-body-content"><div class="mw-content-ltr mw-parser-output">{body}</div></div>
<div id="catlinks">{catlinks}</div></div><footer><p>Footer text</p></footer></body></html>"""


COW_BODY = """
<div class="hatnote searchaux">For the Minecraft Dungeons mob, see <a href="/w/Minecraft_Dungeons:Cow">MCD:Cow</a>.</div>
<div class="notaninfobox"><p>Health points 10</p></div>
<table class="infobox"><tr><td><p>Behavior: Passive</p></td></tr></table>
<div class="thumb tright"><div class="thumbinner"><img src="/images/Cow.png"><div class="thumbcaption"><p>A cow.</p></div></div></div>
<p>A <b>cow</b> is a common <a href="/w/Mob" title="Mob">passive mob</a> found in grassy biomes.<sup id="cite_ref-1" class="reference"><a href="#cite_note-1">[1]</a></sup>
It can be milked.</p>
<div id="toc" class="toc"><ul><li><a href="#Drops">1 Drops</a></li></ul></div>
<h2><span class="mw-headline" id="Drops">Drops</span><span class="mw-editsection">[<a href="/w/Cow?action=edit&amp;section=1">edit</a>]</span></h2>
<p>Cows drop:</p>
<ul><li>0&ndash;2 <a href="/w/Leather">leather</a></li>
<li>1&ndash;3 <a href="/w/Raw_beef">raw beef</a><sup class="noprint">[JE only]</sup>
<ul><li>cooked if the cow dies on fire</li></ul></li></ul>
<table class="wikitable"><tr><td>Leather</td><td>0-2</td></tr></table>
<ol class="references"><li id="cite_note-1">A changelog.</li></ol>
<style>.x{color:red}</style><script>var x = 1;</script>
<table class="navbox"><tr><td><a href="/w/Chicken">Chicken</a> <a href="/w/Pig">Pig</a></td></tr></table>
<p>   </p>
"""


def test_extract_keeps_prose_in_reading_order_and_drops_chrome():
    article = extract_article(page(COW_BODY), f"{BASE}/w/Cow")
    assert article is not None
    assert article.title == "Cow"
    assert article.url == f"{BASE}/w/Cow"
    assert article.paragraphs == [
        "A cow is a common passive mob found in grassy biomes. It can be milked.",
        "Cows drop:",
        "0–2 leather",
        "1–3 raw beef",
        "cooked if the cow dies on fire",
    ]
    assert article.namespace == 0 and not article.is_main_page and not article.is_disambiguation
    assert article.categories == ["Passive mobs"]


def test_content_tables_become_row_sentences_with_tables_sentences_and_vanish_with_drop():
    table = ('<table class="wikitable"><tbody><tr><th>Item</th><th>Quantity</th></tr>'
             '<tr><td><a href="/w/Leather">Leather</a></td><td>0-2<sup class="reference">[2]</sup></td></tr>'
             '<tr><td>Raw beef</td><td>1-3</td></tr></tbody></table>')
    body = f"<p>Cows drop:</p>{table}<p>Cows can be bred.</p>" + COW_BODY
    url = f"{BASE}/w/Cow"
    sentences = extract_article(page(body), url, tables="sentences").paragraphs
    assert sentences[:4] == ["Cows drop:", "Item: Leather; Quantity: 0-2.", "Item: Raw beef; Quantity: 1-3.",
                             "Cows can be bred."]
    assert "Leather; 0-2." in sentences  # a table without a header row: cells joined by "; "
    assert not any("Passive" in p or "Chicken" in p for p in sentences)  # infobox and navbox stay chrome
    assert extract_article(page(body), url).paragraphs == ["Cows drop:", "Cows can be bred."] + \
        extract_article(page(COW_BODY), url).paragraphs  # "drop" is the default


def test_extract_collects_content_links_including_navboxes_but_not_the_sidebar():
    article = extract_article(page(COW_BODY), f"{BASE}/w/Cow")
    assert f"{BASE}/w/Mob" in article.links
    assert f"{BASE}/w/Chicken" in article.links  # navboxes are chrome for text, but good for discovery
    assert f"{BASE}/w/Special:Random" not in article.links
    scope = Scope.from_url(f"{BASE}/w/Cow")
    followable = followable_links(article, scope, CrawlSettings())
    assert f"{BASE}/w/Leather" in followable
    assert f"{BASE}/w/Minecraft_Dungeons:Cow" in followable  # spin-off pages are kept, labelled "spinoff"
    assert not any("action=edit" in url for url in followable)


def test_extract_reads_wiki_redirects_and_returns_none_for_non_wiki_pages():
    subtitle = ('<span class="mw-redirectedfrom">(Redirected from <a href="/w/Cows?redirect=no" '
                'class="mw-redirect" title="Cows">Cows</a>)</span>')
    article = extract_article(page("<p>A cow.</p>", subtitle=subtitle), f"{BASE}/w/Cows")
    assert article.redirected_from == ["Cows"]
    assert article.url == f"{BASE}/w/Cow"  # identity comes from the canonical link
    assert extract_article("<html><body><p>Just a page</p></body></html>", f"{BASE}/x") is None
    assert extract_article(b"\x89PNG\r\n\x1a\n\x00\x00", f"{BASE}/x") is None


def test_extract_survives_malformed_html():
    html = ('<html><head><script>RLCONF={"wgNamespaceNumber":0,"wgTitle":"Bad page",</script>'
            '<h1 id="firstHeading">Bad <span>page</h1>'
            '<div id="mw-content-text"><div class="mw-parser-output"><p>First <b>bold <i>text</p>'
            '<p>Second & third < fourth</div>')
    article = extract_article(html, f"{BASE}/w/Bad_page")
    assert article is not None
    assert article.title == "Bad page"
    assert article.namespace == 0  # read key by key from a config cut off mid-object
    assert article.paragraphs[0] == "First bold text"
    assert "Second & third" in article.paragraphs[1]


@pytest.mark.parametrize("title, config, expected, kind", [
    ("Cow", {}, None, "article"),
    ("Main Page", {"wgIsMainPage": True}, "main page", "article"),
    ("Minecraft Wiki", {"wgIsMainPage": True}, "main page", "article"),
    ("Minecraft Dungeons:Cow", {"wgNamespaceNumber": 10000}, None, "spinoff"),   # kept, labelled
    ("Minecraft  Dungeons:Cow", {"wgNamespaceNumber": 10000}, None, "spinoff"),  # (a double space, as in real data)
    ("MCD:Cow", {"wgNamespaceNumber": 10000}, None, "spinoff"),
    ("Tutorial:Mining", {"wgNamespaceNumber": 10002}, "namespace", "tutorial"),  # unknown prefix, RLCONF decides
    ("Category:Mobs", {"wgNamespaceNumber": 14}, "namespace", "article"),
    ("Talk:Cow", {"wgNamespaceNumber": 1}, "namespace", "article"),
    ("Minecraft Dungeons", {}, None, "spinoff"),
    ("Minecraft: Story Mode", {}, None, "spinoff"),
    ("Key golem", {"wgCategories": ["Minecraft Dungeons mobs"]}, None, "spinoff"),
    ("Golem", {"wgCategories": ["Disambiguation pages"]}, "disambiguation", "disambiguation"),
    ("Time: 1.0", {}, None, "article"),  # a colon is not a namespace unless the wiki says so
])
def test_skip_reasons_and_kinds(title, config, expected, kind):
    article = extract_article(page("<p>Some prose about it.</p>", title=title, config=config), f"{BASE}/w/x")
    assert skip_reason(article, CrawlSettings()) == expected
    assert page_kind(article, CrawlSettings()) == kind


def test_skip_reasons_without_rlconf_use_the_title_prefix_and_markup():
    settings = CrawlSettings()

    def judge(title: str, body: str = "<p>Prose.</p>", catlinks: str = "") -> str | None:
        html = page(body, title=title, catlinks=catlinks).replace("RLCONF=", "NOTCONF=")
        return skip_reason(extract_article(html, f"{BASE}/w/x"), settings)

    assert judge("Cow") is None
    assert judge("File:Cow.png") == "namespace"
    assert judge("Minecraft_Earth:Cow") is None  # a spin-off page: kept (its kind says what it is)
    assert judge("Main Page") == "main page"
    assert judge("Portal", catlinks='<ul><li><a href="/w/Category:Disambiguation_pages">Disambiguation pages</a></li></ul>') \
        == "disambiguation"
    assert judge("Temple", body='<div id="disambig">Temple may refer to:</div><ul><li>A</li></ul>') == "disambiguation"
    assert judge("Moobloom", body="<p>The <b>moobloom</b> is a mob in Minecraft Earth. It grows flowers.</p>") is None
    assert judge("Chest", body="<p>A <b>chest</b> stores items.</p><p>Dungeons hold chests.</p>") is None
    assert judge("Empty", body='<table class="infobox"><tr><td>only a table</td></tr></table>') == "no prose"


def test_normalize_url_gives_one_spelling_per_page():
    assert normalize_url("HTTPS://Minecraft.Wiki:443/w/Jack_o'Lantern#History") == f"{BASE}/w/Jack_o%27Lantern"
    assert normalize_url(f"{BASE}/w/Category%3AMobs") == f"{BASE}/w/Category:Mobs"
    assert normalize_url("/w/Crafting table", base=f"{BASE}/w/Cow") == f"{BASE}/w/Crafting_table"
    scope = Scope.from_url(f"{BASE}/w/Main_Page")
    assert scope.article_path == "/w/"
    assert scope.title_of(f"{BASE}/w/Jack_o%27Lantern") == "Jack o'Lantern"
    assert scope.title_of(f"{BASE}/w/Cow?action=edit") is None
    assert scope.title_of("https://other.example/w/Cow") is None
    assert scope.title_of(f"{BASE}/images/Cow.png") is None


def _record(url: str, title: str, paragraphs: list[str], *, canonical: str | None = None, redirects=(),
            redirected_from=()) -> FetchRecord:
    document = Document(url=url, title=title, canonical_url=canonical or url, skip=None,
                        sha1=content_sha1(paragraphs), paragraphs=paragraphs, redirected_from=list(redirected_from))
    return FetchRecord(url=redirects[0] if redirects else url, skip=None, document=document, redirects=list(redirects))


def test_duplicates_are_stored_once_under_their_own_title_whatever_the_crawl_order():
    scope = Scope.from_url(f"{BASE}/w/Main_Page")
    text = ["A crafting table is a utility block.", "It gives a 3 x 3 grid."]
    records = [
        _record(f"{BASE}/w/Workbench", "Workbench", text),                       # a copy, under its own title
        _record(f"{BASE}/w/Crafting_Table", "Crafting Table", text),             # a copy differing in case
        _record(f"{BASE}/w/Crafting_table", "Crafting table", text, redirects=[f"{BASE}/w/Crafting_tables"]),
        _record(f"{BASE}/w/Bench", "Crafting table", text, canonical=f"{BASE}/w/Crafting_table",
                redirected_from=["Bench"]),                                      # a wiki redirect
        FetchRecord(url=f"{BASE}/w/Table", skip="redirect", redirect_to=f"{BASE}/w/Crafting_tables"),
    ]
    for order in (records, records[::-1], records[2:] + records[:2]):
        pages = build_pages(order, scope).pages
        assert [p.title for p in pages] == ["Crafting table"]
        assert pages[0].aliases == ["Bench", "Crafting Table", "Crafting tables", "Table", "Workbench"]
        assert pages[0].paragraphs == text
        assert pages[0].url == f"{BASE}/w/Crafting_table"
