"""Article extraction: one MediaWiki HTML page -> its title, prose paragraphs and metadata.

Follows the paragraph contract shared with the sample wiki's corpus builder:
- only ``#mw-content-text .mw-parser-output`` counts, minus page chrome (infoboxes, navboxes,
  table of contents, hatnotes, [edit] links, reference markers and lists, images, scripts,
  styles, ``.noprint``) and minus every table;
- every ``<p>`` is a paragraph, every ``<li>`` of a list is a paragraph (headings are not);
- optionally (``tables="sentences"``, outside the contract) each data row of a content table becomes
  one paragraph, "Header: cell; Header: cell.", where the table was;
- text is ``get_text("")`` with whitespace collapsed to single spaces; empty ones are dropped.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

from bs4 import BeautifulSoup, CData, NavigableString, Tag
from bs4.filter import ElementFilter

from crawler.urls import normalize_url

# Page chrome inside the article body: the contract's list, plus a few classes the real
# Minecraft Wiki uses for the same things (notaninfobox, msgbox) and elements with no prose.
# (Matched in Python rather than with CSS selectors: soupsieve took half the extraction time.)
CHROME_TAGS = frozenset({"table", "figure", "img", "script", "style", "noscript", "link", "meta"})
CHROME_CLASSES = frozenset({
    "infobox", "notaninfobox", "navbox", "toc", "hatnote", "mw-editsection", "references", "reflist",
    "mw-references-wrap", "thumb", "gallery", "noprint", "msgbox", "mw-empty-elt",
})
CHROME_IDS = frozenset({"toc"})
DISAMBIGUATION_IDS = frozenset({"disambig", "disambigbox"})
DISAMBIGUATION_CLASSES = frozenset({"disambig", "disambiguation", "dmbox-disambig"})

# Parts of the page the extractor reads; the rest (navigation, sidebars, footer) is never built
# into a tree (saves about a fifth of the parsing time on a wiki page).
_KEPT_TAGS = frozenset({"script", "link"})
_KEPT_IDS = frozenset({"firstHeading", "contentSub", "mw-content-text", "catlinks"}) | DISAMBIGUATION_IDS

# What to do with content tables (infoboxes and navboxes are chrome either way).
TABLE_MODES = ("drop", "sentences")

_WHITESPACE = re.compile(r"\s+")
_CONFIG_MARKERS = ("RLCONF", "mw.config.set(")
_REDIRECTED_FROM = re.compile(r"Redirected from\s+(.+?)\)?\s*$")


@dataclass
class ExtractedPage:
    """What one wiki page says about itself. Filtering (crawler.filters) decides whether it is kept."""

    title: str                              # text of #firstHeading
    url: str                                # canonical URL (<link rel="canonical">), else the page URL
    paragraphs: list[str]                   # prose paragraphs and list items, reading order
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

    namespace = config.get("wgNamespaceNumber")
    article_path = config.get("wgArticlePath")
    if "wgIsMainPage" in config:
        is_main_page = bool(config["wgIsMainPage"])
    else:
        is_main_page = title.casefold() == "main page"
    return ExtractedPage(
        title=title,
        url=canonical,
        paragraphs=_paragraphs(body, tables) if body is not None else [],
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


def _paragraphs(body: Tag, tables: str = "drop") -> list[str]:
    keep_tables = tables == "sentences"
    for element in [e for e in body.find_all(True) if _is_chrome(e, keep_tables)]:
        element.extract()  # (not decompose: its descendants may come up in the list too)
    paragraphs = []
    for element in body.find_all(["p", "li", "table"] if keep_tables else ["p", "li"]):
        if keep_tables and element.find_parent("table") is not None:
            continue  # part of a table's row sentences
        if element.name == "table":
            paragraphs.extend(_row_sentences(element))
            continue
        if element.name == "p" and element.find_parent("li") is not None:
            continue  # already part of its list item's text
        text = clean_text(_own_text(element) if element.name == "li" else element.get_text(""))
        if text:
            paragraphs.append(text)
    return paragraphs


def _is_chrome(tag: Tag, keep_tables: bool = False) -> bool:
    if tag.get("id") in CHROME_IDS:
        return True
    if tag.name in CHROME_TAGS and not (keep_tables and tag.name == "table"):
        return True
    classes = tag.get("class") or ()
    if tag.name == "sup" and "reference" in classes:
        return True
    return not CHROME_CLASSES.isdisjoint(classes)


def _row_sentences(table: Tag) -> list[str]:
    """One sentence per data row of a content table: "Item: Leather; Quantity: 0-2." when the
    first row is all header cells, else the cells joined by "; ". Empty rows give nothing."""
    rows = [[clean_text(cell.get_text("")) for cell in row.find_all(["th", "td"], recursive=False)]
            for row in table.find_all("tr") if row.find_parent("table") is table]
    first = table.find("tr")
    header: list[str] = []
    if rows and first is not None and first.find_parent("table") is table \
            and all(cell.name == "th" for cell in first.find_all(["th", "td"], recursive=False)):
        header, rows = rows[0], rows[1:]
    sentences = []
    for cells in rows:
        parts = [f"{header[i]}: {text}" if i < len(header) and header[i] else text
                 for i, text in enumerate(cells) if text]
        if parts:
            sentence = "; ".join(parts)
            sentences.append(sentence if sentence.endswith((".", "!", "?")) else sentence + ".")
    return sentences


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
