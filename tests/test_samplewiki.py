"""The bundled sample wiki: sources, the MediaWiki-style site over real HTTP, and the bundled corpus."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections import deque
from urllib.parse import unquote, urljoin, urlsplit

import pytest
import requests
from bs4 import BeautifulSoup

from jarvis.crawler.corpus import read_corpus
from jarvis.config import BUNDLED_CORPUS
from jarvis_lab.samplewiki import SampleWiki, SourceError, corpus_pages, start_sample_wiki
from jarvis_lab.samplewiki.server import SampleWikiSite
from jarvis_lab.samplewiki.site import DISAMBIGUATION_CATEGORY
from jarvis_lab.samplewiki.source import parse_article, parse_body, parse_inline, plain_text
from jarvis_lab.samplewiki.titles import MAIN_PAGE, SPINOFF_NAMESPACES, normalize_title, split_namespace, url_path

# The paragraph contract, written out independently of the renderer (the crawler follows the same).
CHROME = ("table, .navbox, #toc, .toc, .hatnote, .mw-editsection, sup.reference, .references, .reflist, "
          "figure, img, script, style, .noprint")


def contract_paragraphs(soup: BeautifulSoup) -> list[str]:
    """Paragraphs by the contract. Takes the chrome out of ``soup``."""
    body = soup.select_one("#mw-content-text .mw-parser-output")
    for element in body.select(CHROME):
        element.decompose()
    texts = (" ".join(el.get_text("").split()) for el in body.find_all(["p", "li"]))
    return [text for text in texts if text]


def rlconf(soup: BeautifulSoup) -> dict:
    script = next(s.string for s in soup.find_all("script") if s.string and "RLCONF=" in s.string)
    return json.JSONDecoder().raw_decode(script, script.index("RLCONF=") + len("RLCONF="))[0]


@pytest.fixture(scope="module")
def wiki() -> SampleWiki:
    return SampleWiki.load()


@pytest.fixture(scope="module")
def served(wiki):
    server, base_url = start_sample_wiki(port=0, wiki=wiki)
    with requests.Session() as session:
        yield session, base_url
    server.shutdown()


@pytest.fixture(scope="module")
def site(wiki) -> SampleWikiSite:
    """The same site without sockets, for walking every link quickly."""
    return SampleWikiSite(wiki, "http://127.0.0.1:8080")


# --------------------------------------------------------------------------- sources


def test_sources_are_well_formed(wiki):
    # Titles match file names, groups are known, every link points to a page, no stray markup.
    assert wiki.source_problems() == []


def test_at_least_150_articles(wiki):
    assert len(wiki.articles) >= 150


def test_no_two_articles_share_a_paragraph(wiki):
    assert wiki.shared_paragraphs() == []


def test_inline_markup_becomes_the_text_a_reader_sees():
    inlines = parse_inline("A **[[Cow|cow]]** drops [[Leather]]<ref>Java Edition 1.0</ref>. See [[Cow#Drops|drops]].")
    assert plain_text(inlines) == "A cow drops Leather. See drops."


def test_table_cells_keep_piped_links_and_lists_stay_items():
    blocks = parse_body("Intro line one\nline two.\n- first [[A|a]]\n- second\n\n| X | Y |\n|---|---|\n| [[B|b]] | 2 |\n")
    paragraph, items, table = blocks
    assert plain_text(paragraph.inlines) == "Intro line one\nline two."
    assert [plain_text(i) for i in items.items] == ["first a", "second"]
    assert [plain_text(c) for c in table.rows[0]] == ["b", "2"]


@pytest.mark.parametrize("text, message", [
    ("no front matter\n", "front matter"),
    ("---\ntitle: X\ngroup: mobs\n---\n# Top heading\n", "headings"),
    ("---\ntitle: X\ngroupe: mobs\n---\nText.\n", "unknown front matter"),
])
def test_bad_sources_name_the_problem(text, message):
    with pytest.raises(SourceError, match=message):
        parse_article(text)


def write_wiki(root, articles: dict[str, str], site_yaml: str = "main_page: Hello.\n") -> SampleWiki:
    folder = root / "articles"
    folder.mkdir()
    for name, text in articles.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    (root / "site.yaml").write_text(site_yaml, encoding="utf-8")
    return SampleWiki.load(folder, root / "site.yaml")


def test_served_paragraphs_equal_the_corpus_for_awkward_text(tmp_path):
    wiki = write_wiki(tmp_path, {"Cow": (
        "---\ntitle: Cow\ngroup: mobs\nredirects: [Cows]\nhatnote: \"See [[Pig]].\"\n"
        "infobox:\n  Drops: <b>1</b> & [[Pig]]<ref>x</ref>\n---\n"
        "Fish & chips <3 \"quoted\" it's a **[[Pig|pig]]**-like\nword<ref>note [[Pig]]</ref>word  spaced.\n\n"
        "## Drops & more\n- only a ref <ref>r</ref>\n-   [[Cow#Drops|self link]] and [[Cows]]\n1. one\n"
        "| A | B |\n|---|---|\n| [[Pig|p]] | table text |\n\nLast [[Missing page]] line.\n"),
        "Pig": "---\ntitle: Pig\ngroup: mobs\n---\nA pig.\n"})
    site = SampleWikiSite(wiki, "http://127.0.0.1:8080")
    corpus = {page.title: page for page in corpus_pages(wiki, tables="drop")}  # the paragraph contract
    assert corpus["Cow"].paragraphs == [
        "Fish & chips <3 \"quoted\" it's a pig-like wordword spaced.", "only a ref", "self link and Cows", "one",
        "Last Missing page line."]
    for url in ("/w/Cow", "/w/Cows"):
        soup = BeautifulSoup(site.respond(url).body, "lxml")
        assert contract_paragraphs(soup) == corpus["Cow"].paragraphs
    assert wiki.source_problems() == ["Cow.md: link to missing page [[Missing page]]"]


# --------------------------------------------------------------------------- corpus


def test_committed_corpus_equals_a_fresh_generation(wiki, tmp_path):
    fresh = tmp_path / "corpus.jsonl"
    result = subprocess.run([sys.executable, "-m", "jarvis_lab.samplewiki", "build-corpus", "--out", str(fresh)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert BUNDLED_CORPUS.read_bytes() == fresh.read_bytes(), "run: python -m jarvis_lab.samplewiki build-corpus"


def test_corpus_has_one_page_per_article_with_its_aliases(wiki):
    pages = {page.title: page for page in read_corpus(BUNDLED_CORPUS)}
    assert {title for title, page in pages.items() if page.page_kind != "spinoff"} == set(wiki.articles)
    assert {title for title, page in pages.items() if page.page_kind == "spinoff"} == {
        title for title in wiki.pages if split_namespace(title)[0] in SPINOFF_NAMESPACES}
    crafting = pages["Crafting table"]
    assert {"Workbench", "Crafting Table"} <= set(crafting.aliases)
    assert crafting.url == "http://127.0.0.1:8080/w/Crafting_table"
    assert pages["Jack o'Lantern"].url.endswith("/w/Jack_o%27Lantern")
    assert all(page.paragraphs for page in pages.values())


# --------------------------------------------------------------------------- the site over HTTP


def check_skeleton(html: str, title: str, base_url: str) -> BeautifulSoup:
    soup = BeautifulSoup(html, "lxml")
    assert soup.select_one("#firstHeading").get_text("") == title
    assert soup.select_one("#mw-content-text > .mw-parser-output") is not None
    assert soup.find("link", rel="canonical")["href"] == base_url + url_path(title)
    body_classes = soup.body["class"]
    assert "mediawiki" in body_classes and "page-" + re.sub(r"[^A-Za-z0-9_-]", "_", title.replace(" ", "_")) in body_classes
    for selector in ("#mw-navigation", "#p-navigation", "#catlinks", "#footer"):
        assert soup.select_one(selector) is not None, selector
    config = rlconf(soup)
    assert config["wgNamespaceNumber"] == 0 and config["wgIsMainPage"] is False
    assert config["wgPageName"] == title.replace(" ", "_") and config["wgIsRedirect"] is False
    return soup


def test_every_article_is_served_with_the_mediawiki_skeleton_and_the_corpus_paragraphs(wiki, served):
    session, base_url = served
    corpus = {page.title: page for page in corpus_pages(wiki, tables="drop")}  # the paragraph contract
    for title in wiki.articles:
        response = session.get(base_url + url_path(title))
        assert response.status_code == 200, title
        assert response.headers["Content-Type"] == "text/html; charset=UTF-8"
        soup = check_skeleton(response.text, title, base_url)
        assert contract_paragraphs(soup) == corpus[title].paragraphs, title


def content_part(html: str) -> str:
    """#mw-content-text and what follows it (category links, sidebar, footer)."""
    return html[html.index('<div id="mw-content-text"'):]


def test_every_redirect_serves_its_target_and_says_so(wiki, served):
    session, base_url = served
    targets = {title: session.get(base_url + url_path(title)).text for title in set(wiki.redirects.values())}
    for name, target in wiki.redirects.items():
        response = session.get(base_url + url_path(name), allow_redirects=False)
        assert response.status_code == 200, name
        # The target's very content and chrome (checked by the test above); the top of the page says more.
        assert content_part(response.text) == content_part(targets[target]), name
        head = response.text[:response.text.index('<div id="mw-content-text"')]
        soup = BeautifulSoup(head, "lxml")
        assert soup.select_one("#firstHeading").get_text("") == target
        assert soup.find("link", rel="canonical")["href"] == base_url + url_path(target)
        assert rlconf(soup)["wgPageName"] == target.replace(" ", "_")
        note = soup.select_one("#contentSub .mw-redirectedfrom")
        assert " ".join(note.get_text("").split()) == f"(Redirected from {name})"
        assert note.a["href"] == url_path(name) + "?redirect=no"
        assert rlconf(soup)["wgRedirectedFrom"] == name.replace(" ", "_")


def test_redirect_itself_is_shown_with_redirect_no(served):
    session, base_url = served
    soup = BeautifulSoup(session.get(base_url + "/w/Workbench?redirect=no").text, "lxml")
    assert rlconf(soup)["wgIsRedirect"] is True
    assert soup.select_one(".redirectText a")["href"] == "/w/Crafting_table"


def test_duplicates_are_separate_pages_with_a_byte_identical_body(wiki, served):
    session, base_url = served
    assert len(wiki.duplicates) >= 3
    for title, article in wiki.duplicates.items():
        duplicate, original = (session.get(base_url + url_path(t)).text for t in (title, article))
        check_skeleton(duplicate, title, base_url)
        body = re.compile(r'<div id="mw-content-text".*?<div class="printfooter"', re.S)
        assert body.search(duplicate).group() == body.search(original).group()


def test_main_page_and_root_redirect(served):
    session, base_url = served
    root = session.get(base_url + "/", allow_redirects=False)
    assert root.status_code == 301 and root.headers["Location"] == base_url + "/w/Main_Page"
    soup = BeautifulSoup(session.get(root.headers["Location"]).text, "lxml")
    assert rlconf(soup)["wgIsMainPage"] is True


def test_a_title_not_in_normal_form_is_redirected_to_it(served):
    session, base_url = served
    response = session.get(base_url + "/w/crafting%20table", allow_redirects=False)
    assert response.status_code == 301 and response.headers["Location"] == base_url + "/w/Crafting_table"


def test_unknown_title_is_a_404_wiki_page(served):
    session, base_url = served
    response = session.get(base_url + "/w/No_such_block")
    assert response.status_code == 404
    soup = BeautifulSoup(response.text, "lxml")
    assert soup.select_one("#firstHeading").get_text("") == "No such block"
    assert soup.select_one("#mw-content-text .noarticletext") is not None


def test_robots_txt_keeps_crawlers_out_of_special_pages(served):
    session, base_url = served
    response = session.get(base_url + "/robots.txt")
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/plain")
    assert "Disallow: /w/Special:" in response.text.splitlines()


def test_conditional_requests_get_304_without_a_body(served):
    session, base_url = served
    url = base_url + "/w/Cow"
    first = session.get(url)
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    for headers in ({"If-None-Match": etag}, {"If-None-Match": f'"other", W/{etag}'}, {"If-Modified-Since": modified}):
        again = session.get(url, headers=headers)
        assert again.status_code == 304 and again.content == b"", headers
        assert again.headers["ETag"] == etag
    assert session.get(url, headers={"If-None-Match": '"stale"'}).status_code == 200
    head = session.head(url)
    assert head.status_code == 200 and head.content == b"" and head.headers["Content-Length"] == str(len(first.content))
    assert session.get(url, headers={"If-None-Match": '"stale"', "If-Modified-Since": modified}).status_code == 200
    redirect_view = session.get(base_url + "/w/Cows")
    assert redirect_view.headers["ETag"] != etag       # another representation, another tag


def test_validators_are_stable_across_restarts_and_follow_the_source(tmp_path):
    write_wiki(tmp_path, {"Cow": "---\ntitle: Cow\ngroup: mobs\n---\nA cow is a mob.\n"})
    source = tmp_path / "articles" / "Cow.md"

    def validators() -> tuple[str, float]:
        wiki = SampleWiki.load(tmp_path / "articles", tmp_path / "site.yaml")
        site = SampleWikiSite(wiki, "http://127.0.0.1:8080")
        response = site.respond("/w/Cow")
        return response.etag, response.last_modified

    assert validators() == validators()
    before = validators()
    source.write_text("---\ntitle: Cow\ngroup: mobs\n---\nA cow is a passive mob.\n", encoding="utf-8")
    after = validators()
    assert after[0] != before[0]


def test_shutdown_closes_the_port(wiki):
    server, base_url = start_sample_wiki(port=0, wiki=wiki)
    assert requests.get(base_url + "/robots.txt", timeout=5).status_code == 200
    server.shutdown()
    with pytest.raises(requests.ConnectionError):
        requests.get(base_url + "/robots.txt", timeout=5)


def test_cli_reports_a_busy_port_in_one_line():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "jarvis", "sample-wiki", "--port", str(port)],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and "port is in use" in result.stderr


# --------------------------------------------------------------------------- links, as a crawler follows them


def content_links(site: SampleWikiSite, title: str) -> set[str]:
    """Titles linked from a page's #mw-content-text (no sidebar, no footer), as /w/ URLs."""
    html = site.respond(url_path(title)).body.decode("utf-8")
    content = html[html.index('<div id="mw-content-text"'):html.index('<div class="printfooter"')]
    titles = set()
    for anchor in BeautifulSoup(content, "lxml").find_all("a", href=True):
        parts = urlsplit(urljoin("http://127.0.0.1:8080/w/", anchor["href"]))
        if parts.path.startswith("/w/") and not parts.query:
            titles.add(normalize_title(unquote(parts.path[3:])))
    return titles


@pytest.fixture(scope="module")
def link_graph(site) -> dict[str, set[str]]:
    """Content links of every page with content in the article namespace."""
    wiki = site.wiki
    titles = [*wiki.articles, *wiki.duplicates, *wiki.disambiguations, MAIN_PAGE]
    return {title: content_links(site, title) for title in titles}


def walk(wiki: SampleWiki, graph: dict[str, set[str]], start: str) -> set[str]:
    """Every article-namespace title reached by following content links, never through the Main Page."""
    seen, queue = {start}, deque([start])
    while queue:
        title = queue.popleft()
        for linked in graph[wiki.redirects.get(title, title)]:
            if linked not in seen and wiki.kind(linked) in ("article", "redirect", "duplicate", "disambiguation"):
                seen.add(linked)
                queue.append(linked)
    return seen


@pytest.mark.parametrize("start", [MAIN_PAGE, "Cow"])
def test_every_article_and_alias_is_reachable_by_following_article_links(wiki, link_graph, start):
    reached = walk(wiki, link_graph, start)
    everything = set(wiki.articles) | set(wiki.redirects) | set(wiki.duplicates)
    assert everything - reached == set()


def test_pages_a_crawler_must_leave_out_are_served_and_linked(wiki, site):
    cow_links = content_links(site, "Cow")
    for namespace in ("Minecraft Dungeons", "Minecraft Earth"):
        assert f"{namespace}:Cow" in cow_links
    spinoffs = [t for t in wiki.pages if t.split(":")[0] in SPINOFF_NAMESPACES]
    assert len({t.split(":")[0] for t in spinoffs}) == len(SPINOFF_NAMESPACES)
    html = site.respond(url_path("Cow")).body.decode("utf-8")
    soup = BeautifulSoup(html, "lxml")
    hrefs = {a["href"] for a in soup.find_all("a", href=True)}
    for prefix in ("/w/Category:", "/w/File:", "/w/Template:", "/w/Special:", "/w/Help:", "/w/Minecraft_Wiki:"):
        assert any(h.startswith(prefix) for h in hrefs), prefix
    assert any(h.startswith("/w/Talk:") for h in {a["href"] for a in soup.select("#ca-talk a")})
    for title in [*spinoffs, "Talk:Cow", "User:Alex", "Help:Contents", "Category:Passive mobs", "File:Cow.png",
                  "Template:Navbox mobs"]:
        response = site.respond(url_path(title))
        assert response.status == 200, title
        assert rlconf(BeautifulSoup(response.body, "lxml"))["wgNamespaceNumber"] != 0, title


def test_disambiguation_pages_are_marked_and_linked_from_hatnotes(wiki, site):
    assert {"Golem", "Portal", "Temple"} <= set(wiki.disambiguations)
    soup = BeautifulSoup(site.respond("/w/Golem").body, "lxml")
    assert soup.select_one("#mw-content-text .disambig") is not None
    assert DISAMBIGUATION_CATEGORY in rlconf(soup)["wgCategories"]
    assert DISAMBIGUATION_CATEGORY in soup.select_one("#catlinks").get_text(" ")
    iron_golem = BeautifulSoup(site.respond("/w/Iron_golem").body, "lxml")
    assert any(a["href"] == "/w/Golem" for note in iron_golem.select(".hatnote") for a in note.find_all("a"))


def test_special_random_redirects_to_an_article(site):
    response = site.respond("/w/Special:Random")
    assert response.status == 302
    assert normalize_title(unquote(urlsplit(response.location).path[3:])) in site.wiki.articles

