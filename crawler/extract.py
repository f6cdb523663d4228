"""Article extraction: one MediaWiki HTML page -> its title, prose paragraphs with their section
paths, and metadata.

Follows the paragraph contract shared with the sample wiki's corpus builder:
- only ``#mw-content-text .mw-parser-output`` counts, minus page chrome (infoboxes, navboxes,
  table of contents, hatnotes, image captions, [edit] links, reference markers and lists, images,
  scripts, styles, ``.noprint``) and minus every table;
- every ``<p>`` is a paragraph, every ``<li>`` of a list is a paragraph (headings are not);
- each paragraph has a section path: the texts of the h2..h6 headings above it, outermost first
  (``["Drops", "On death"]``; ``[]`` in the lead), read from MediaWiki 1.43's
  ``div.mw-heading > hN`` as well as from the older ``hN > span.mw-headline``, [edit] links left out;
- optionally (``tables`` "sentences" or "text", outside the contract) each data row of a content
  table becomes one paragraph where the table was (crawler.tables; layout tables are read as prose);
- text is ``get_text("")`` with whitespace collapsed to single spaces; empty ones are dropped.

Hatnotes are not content, but their text is kept apart (``ExtractedPage.hatnotes``): they say
what a page is about ("This article is about the joke feature. For ..."), which crawler.page_kinds reads.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

from bs4 import BeautifulSoup, CData, NavigableString, Tag
from bs4.filter import ElementFilter

from jarvis.crawler.tables import TABLE_MODES, html_grid, row_texts
from jarvis.crawler.urls import normalize_url

# Bumped whenever the text extracted from a page changes, so that cached crawls of a fixed site
# (the real-wiki test bed) are made again.
EXTRACTOR_VERSION = 2

# Page chrome inside the article body: the contract's list, plus a few classes the real
# Minecraft Wiki uses for the same things (notaninfobox, msgbox) and elements with no prose.
# (Matched in Python rather than with CSS selectors: soupsieve took half the extraction time.)
CHROME_TAGS = frozenset({"table", "figure", "img", "script", "style", "noscript", "link", "meta"})
CHROME_CLASSES = frozenset({
    "infobox", "notaninfobox", "navbox", "toc", "hatnote", "mw-editsection", "references", "reflist",
    "mw-references-wrap", "thumb", "thumbcaption", "gallery", "noprint", "msgbox", "mw-empty-elt", "sidebar",
    "navigation-not-searchable",
})
HEADING_TAGS = ("h2", "h3", "h4", "h5", "h6")
CHROME_IDS = frozenset({"toc"})
DISAMBIGUATION_IDS = frozenset({"disambig", "disambigbox"})
DISAMBIGUATION_CLASSES = frozenset({"disambig", "disambiguation", "dmbox-disambig"})

# Parts of the page the extractor reads; the rest (navigation, sidebars, footer) is never built
# into a tree (saves about a fifth of the parsing time on a wiki page).
_KEPT_TAGS = frozenset({"script", "link"})
_KEPT_IDS = frozenset({"firstHeading", "contentSub", "mw-content-text", "catlinks"}) | DISAMBIGUATION_IDS

_WHITESPACE = re.compile(r"\s+")
_CONFIG_MARKERS = ("RLCONF", "mw.config.set(")
_REDIRECTED_FROM = re.compile(r"Redirected from\s+(.+?)\)?\s*$")
_EDIT_LINK = re.compile(r"\s*\[\s*edit(?:\s*\|\s*edit source)?\s*\]\s*$", re.IGNORECASE)


@dataclass
class ExtractedPage:
    """What one wiki page says about itself. Filtering (crawler.filters) decides whether it is kept."""

    title: str                              # text of #firstHeading
    url: str                                # canonical URL (<link rel="canonical">), else the page URL
    paragraphs: list[str]                   # prose paragraphs and list items, reading order
    sections: list[list[str]] = field(default_factory=list)  # section path of each paragraph ([] = lead)
    hatnotes: list[str] = field(default_factory=list)        # hatnote texts (not content), in order
    redirected_from: list[str] = field(default_factory=list)  # wiki redirects that led here
    namespace: int | None = None            # wgNamespaceNumber, when the page says
    is_main_page: bool = False
    is_disambiguation: bool = False
    categories: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # absolute, normalized URLs linked from the content
    article_path: str | None = None         # "/w/" from wgArticlePath, when the page says


def clean_text(text: str) -> str:
    """Whitespace collapsed to single spaces, stripped (the contract's text normalization)."""
    return _WHITESPACE.sub(" ", text).strip()


def extract_article(html: str | bytes, url: str, *, tables: str = "drop") -> ExtractedPage | None:
    """The article in a MediaWiki HTML page, or None if the document is no wiki page at all
    (neither a ``#firstHeading`` nor a ``.mw-parser-output``). ``tables`` is one of TABLE_MODES."""
    if tables not in TABLE_MODES:
        raise ValueError(f"tables must be one of {TABLE_MODES}, got {tables!r}")
    soup = BeautifulSoup(html, "lxml", parse_only=_ReadParts())
    heading = soup.find(id="firstHeading")
    content = soup.find(id="mw-content-text")
    body = ((content.find(class_="mw-parser-output") if content is not None else None)
            or soup.find(class_="mw-parser-output") or content)
    if heading is None and body is None:
        return None

    config = _wiki_config(soup)
    canonical = _canonical_url(soup, url)
    title = clean_text(heading.get_text("")) if heading is not None else ""
    if not title:
        title = str(config.get("wgPageName") or config.get("wgTitle") or "").replace("_", " ").strip()
    categories = _categories(soup, config)
    links = _links(soup, url)  # before the chrome goes: navboxes are good for discovery

    paragraphs, sections, hatnotes = _content(body, tables, title) if body is not None else ([], [], [])
    namespace = config.get("wgNamespaceNumber")
    article_path = config.get("wgArticlePath")
    if "wgIsMainPage" in config:
        is_main_page = bool(config["wgIsMainPage"])
    else:
        is_main_page = title.casefold() == "main page"
    return ExtractedPage(
        title=title,
        url=canonical,
        paragraphs=paragraphs,
        sections=sections,
        hatnotes=hatnotes,
        redirected_from=_redirected_from(soup, config),
        namespace=namespace if isinstance(namespace, int) else None,
        is_main_page=is_main_page,
        is_disambiguation=_is_disambiguation(soup, title, categories),
        categories=categories,
        links=links,
        article_path=article_path.replace("$1", "") if isinstance(article_path, str) else None,
    )


class _ReadParts(ElementFilter):
    """Builds only the parts of a MediaWiki page the extractor reads (see _KEPT_IDS)."""

    def allow_tag_creation(self, nsprefix, name, attrs) -> bool:
        attrs = attrs or {}
        classes = attrs.get("class") or ""
        if not isinstance(classes, str):
            classes = " ".join(classes)
        return name in _KEPT_TAGS or attrs.get("id") in _KEPT_IDS or "mw-parser-output" in classes.split()

    def allow_string_creation(self, string: str) -> bool:
        return False  # text outside the kept parts


# --------------------------------------------------------------------------- prose


def _content(body: Tag, tables: str = "drop", title: str = "") -> tuple[list[str], list[list[str]], list[str]]:
    """(paragraphs, their section paths, hatnote texts) of an article body (see the module docstring);
    ``title`` is the subject of table rows that name none (a recipe's ingredients)."""
    hatnotes = [text for text in (clean_text(note.get_text("")) for note in body.find_all(class_="hatnote")) if text]
    keep_tables = tables != "drop"
    for element in [e for e in body.find_all(True) if _is_chrome(e, keep_tables)]:
        element.extract()  # (not decompose: its descendants may come up in the list too)
    grids = {}
    if keep_tables:
        grids = {id(table): grid for table in body.find_all("table") if (grid := html_grid(table)) is not None}
    paragraphs: list[str] = []
    sections: list[list[str]] = []
    path: list[tuple[int, str]] = []   # (heading level, text) of the open sections
    for element in body.find_all(["p", "li", "table", *HEADING_TAGS]):
        if grids and any(id(parent) in grids for parent in element.find_parents("table")):
            continue  # part of a content table's row texts
        if element.name in HEADING_TAGS:
            level, text = int(element.name[1]), heading_text(element)
            while path and path[-1][0] >= level:
                path.pop()
            if text:
                path.append((level, text))
            continue
        if element.name == "table":
            texts = row_texts(grids[id(element)], tables, subject=title) if id(element) in grids else []
        elif element.name == "p" and element.find_parent("li") is not None:
            continue  # already part of its list item's text
        else:
            texts = [clean_text(_own_text(element) if element.name == "li" else element.get_text(""))]
        for text in texts:
            if text:
                paragraphs.append(text)
                sections.append([name for _, name in path])
    return paragraphs, sections, hatnotes


def heading_text(heading: Tag) -> str:
    """A section heading's text: its ``.mw-headline`` (MediaWiki before 1.43) or the heading
    itself (1.43 puts the [edit] link beside the heading, not in it), without "[edit]"."""
    headline = heading.find(class_="mw-headline")
    return _EDIT_LINK.sub("", clean_text((headline or heading).get_text("")))


def _is_chrome(tag: Tag, keep_tables: bool = False) -> bool:
    if tag.get("id") in CHROME_IDS:
        return True
    if tag.name in CHROME_TAGS and not (keep_tables and tag.name == "table"):
        return True
    classes = tag.get("class") or ()
    if tag.name == "sup" and "reference" in classes:
        return True
    return not CHROME_CLASSES.isdisjoint(classes)


def _own_text(item: Tag) -> str:
    """A list item's text without its nested lists (their items are paragraphs of their own)."""
    nested = item.find_all(["ul", "ol"])
    if not nested:
        return item.get_text("")
    nested_ids = {id(tag) for tag in nested}
    parts = []
    for string in item.find_all(string=True):
        if type(string) not in (NavigableString, CData):
            continue  # comments, doctype and the like are not text
        if id(string.find_parent(["ul", "ol"])) in nested_ids:
            continue
        parts.append(str(string))
    return "".join(parts)


# --------------------------------------------------------------------------- metadata


def _wiki_config(soup: BeautifulSoup) -> dict:
    """MediaWiki's page configuration (RLCONF / mw.config.set) from the page's scripts, or {}."""
    config: dict = {}
    decoder = json.JSONDecoder()
    for script in soup.find_all("script"):
        text = script.string or ""
        for marker in _CONFIG_MARKERS:
            start = text.find(marker)
            brace = text.find("{", start) if start >= 0 else -1
            if brace < 0:
                continue
            try:
                value, _ = decoder.raw_decode(text, brace)
            except ValueError:
                value = _config_by_key(text)
            if isinstance(value, dict):
                config.update(value)
    return config


def _config_by_key(text: str) -> dict:
    """Fallback for a config object that is not strict JSON: the few keys the crawler reads."""
    found: dict = {}
    for key in ("wgNamespaceNumber", "wgIsMainPage", "wgCategories", "wgRedirectedFrom", "wgArticlePath",
                "wgPageName", "wgTitle"):
        match = re.search(rf'"{key}"\s*:\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\]|-?\d+|true|false|null)', text)
        if match:
            try:
                found[key] = json.loads(match.group(1))
            except ValueError:
                pass
    return found


def _canonical_url(soup: BeautifulSoup, url: str) -> str:
    """The page's canonical URL as the page spells it (made absolute), else the URL it came from."""
    link = soup.find("link", rel="canonical", href=True)
    return urldefrag(urljoin(url, link["href"].strip())).url if link is not None else url


def _redirected_from(soup: BeautifulSoup, config: dict) -> list[str]:
    """Titles of the wiki redirects that led to this page ("(Redirected from Workbench)")."""
    titles = []
    for note in soup.find_all(class_="mw-redirectedfrom"):
        anchors = note.find_all("a")
        if anchors:
            titles.extend(clean_text(a.get_text("")) for a in anchors)
        else:
            match = _REDIRECTED_FROM.search(clean_text(note.get_text("")))
            if match:
                titles.append(match.group(1).strip())
    redirected = config.get("wgRedirectedFrom")
    if isinstance(redirected, str) and redirected:
        titles.append(redirected.replace("_", " "))
    unique: dict[str, None] = {}
    for title in titles:
        if title and title.casefold() not in {t.casefold() for t in unique}:
            unique[title] = None
    return list(unique)


def _categories(soup: BeautifulSoup, config: dict) -> list[str]:
    categories = config.get("wgCategories")
    if isinstance(categories, list):
        return [str(c) for c in categories]
    catlinks = soup.find(id="catlinks")
    if catlinks is None:
        return []
    return [clean_text(a.get_text("")) for a in catlinks.find_all("a") if a.find_parent("li") is not None]


def _is_disambiguation(soup: BeautifulSoup, title: str, categories: list[str]) -> bool:
    if title.casefold().endswith("(disambiguation)"):
        return True
    if any("disambiguation" in c.casefold() for c in categories):
        return True
    return soup.find(_is_disambiguation_marker) is not None


def _is_disambiguation_marker(tag: Tag) -> bool:
    return (tag.get("id") in DISAMBIGUATION_IDS
            or not DISAMBIGUATION_CLASSES.isdisjoint(tag.get("class") or ()))


def _links(soup: BeautifulSoup, url: str) -> list[str]:
    """Normalized absolute URLs of the links in the page content (the whole page if it has no
    #mw-content-text), in document order, each once."""
    container = soup.find(id="mw-content-text") or soup
    hrefs = dict.fromkeys(a["href"].strip() for a in container.find_all("a", href=True))
    links: dict[str, None] = {}
    for href in hrefs:
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        try:
            links[normalize_url(href, base=url)] = None
        except ValueError:  # an unparsable URL in the page
            continue
    return list(links)
