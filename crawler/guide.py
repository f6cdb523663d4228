"""A server's own guide: a directory of Markdown files -> corpus pages of kind ``server``.

Players ask about the server as much as about the game (how to claim land, how many homes, where
the shop is); the admin writes those facts as Markdown, and each file becomes one page:

- the title is the file's first ``#`` heading, else its name ("land-claims.md" -> "Land claims");
- ``##`` and deeper headings are the section path of what follows them (``[]`` before the first);
- paragraphs, list items, block quotes and code blocks are paragraphs; a table becomes one text per
  row, as the crawler writes wiki tables (crawler/tables.py);
- an optional YAML front matter (``---`` lines around it) may give ``aliases`` (other names players
  use for the page), ``title`` and ``url`` (the page's address on the server's site, absolute http(s));
- the URL is the front matter's ``url``, else the guide's web address (``docs_url``) joined with the
  page's name: its path under the directory without ``.md``/``.markdown``, each part percent-encoded
  (``home.md`` -> ``BASE/home``, ``rules/pvp.md`` -> ``BASE/rules/pvp``), else none (``""``: a reply
  then names the page and the guide, never a file name); the kind is ``server``, the site ``server guide``.

The guide's ``taught/`` folder is the desk's (jarvis panel): answers the admin taught, which Jarvis says for
their questions before any page is read. They are no pages of the guide: an index never holds them, so that
teaching one answer changes no other question's search.

Markdown is read with markdown-it-py (CommonMark, plus tables). A file that is not UTF-8 text, or
whose front matter is not a YAML mapping, is a ``GuideError`` naming it: nothing half-read is indexed.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from urllib.parse import quote, urlsplit

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from jarvis.crawler.corpus import CorpusError, Page
from jarvis.crawler.tables import Grid, cell_text, row_texts

log = logging.getLogger(__name__)

GUIDE_SITE = "server guide"          # the site of every guide page (answers name it)
GUIDE_PAGE_KIND = "server"
MARKDOWN_SUFFIXES = (".md", ".markdown")
TAUGHT_FOLDER = "taught"             # the desk's taught answers, under the guide folder: not pages (above)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class GuideError(CorpusError):
    """A guide directory or file that cannot be read (a user error, one line)."""


def guide_files(directory: str | os.PathLike) -> list[Path]:
    """The Markdown files under directory (not in hidden folders, not the taught answers), in a stable order;
    GuideError when it is not a directory."""
    directory = Path(directory)
    if not directory.is_dir():
        raise GuideError(f"guide directory not found: {directory}")
    return sorted((p for p in directory.rglob("*") if p.suffix.lower() in MARKDOWN_SUFFIXES and p.is_file()
                   and not _hidden_or_taught(p.relative_to(directory).parts)),
                  key=lambda p: p.relative_to(directory).as_posix())


def _hidden_or_taught(parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") for part in parts) or (len(parts) > 1 and parts[0] == TAUGHT_FOLDER)


def read_guide(directory: str | os.PathLike, docs_url: str = "") -> list[Page]:
    """Every Markdown file under directory as a page (see the module docstring), in path order.
    ``docs_url``: the guide's web address, the base of its pages' URLs ("": pages without a URL)."""
    directory = Path(directory)
    docs_url = check_docs_url(docs_url)
    pages: list[Page] = []
    seen: dict[str, str] = {}
    for path in guide_files(directory):
        name = path.relative_to(directory).as_posix()
        page = read_guide_page(path, name, docs_url)
        if not page.paragraphs:
            log.warning("%s: no text under its title; not indexed", path)
            continue
        other = seen.get(page.title.casefold())
        if other is not None:
            raise GuideError(f"{path}: its title {page.title!r} is also the title of {other}; "
                             "give one of them another first heading")
        seen[page.title.casefold()] = name
        pages.append(page)
    return pages


def check_docs_url(docs_url: str) -> str:
    """The guide's web address, checked: "" or an absolute http(s) URL (GuideError otherwise)."""
    docs_url = docs_url.strip()
    if docs_url and not _is_web_address(docs_url):
        raise GuideError(f"the guide's web address {docs_url!r} is not an absolute http(s) URL "
                         "(e.g. https://blockhaven.example/guide/)")
    return docs_url


def guide_page_url(docs_url: str, name: str) -> str:
    """The address of the guide page ``name`` (its path in the guide) under ``docs_url``; "" without one."""
    if not docs_url:
        return ""
    stem = name
    for suffix in MARKDOWN_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[:-len(suffix)]
            break
    return f"{docs_url.rstrip('/')}/{quote(stem, safe='/')}"


def read_guide_page(path: Path, name: str, docs_url: str = "") -> Page:
    """One Markdown file as a page; ``name`` is its path in the guide, ``docs_url`` the guide's web address."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GuideError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); "
                         "save it as UTF-8") from None
    except OSError as exc:
        raise GuideError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    front, body = _front_matter(text, path)
    title, paragraphs, sections = markdown_paragraphs(body)
    title = _string(front.get("title"), path, "title") or title or title_from_file_name(path)
    aliases = front.get("aliases", [])
    if isinstance(aliases, str):
        aliases = [aliases]
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise GuideError(f"{path}: front matter 'aliases' must be a list of names")
    aliases = sorted({" ".join(a.split()) for a in aliases if a.strip()} - {title}, key=str.casefold)
    url = _string(front.get("url"), path, "url")
    if url and not _is_web_address(url):
        raise GuideError(f"{path}: front matter 'url' must be the page's absolute http(s) address, got {url!r}")
    return Page(title=title, url=url or guide_page_url(docs_url, name), paragraphs=paragraphs, aliases=aliases,
                sections=sections, page_kind=GUIDE_PAGE_KIND, site=GUIDE_SITE)


def _is_web_address(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not any(c.isspace() for c in url)


def title_from_file_name(path: Path) -> str:
    """'land-claims.md' -> 'Land claims' (sentence case, as wiki titles are written)."""
    words = " ".join(re.split(r"[-_\s]+", path.stem)).strip()
    return words[:1].upper() + words[1:] if words else path.stem


def markdown_paragraphs(text: str) -> tuple[str, list[str], list[list[str]]]:
    """(the first H1's text, paragraphs, section path of each) of a Markdown text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    title = ""
    paragraphs: list[str] = []
    sections: list[list[str]] = []
    path: list[tuple[int, str]] = []
    list_depth = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1])
            heading = _inline_text(tokens[i + 1])
            if level == 1 and not title:
                title = heading
            elif level >= 2 and heading:
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, heading))
            i += 3
            continue
        if token.type in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            _add(paragraphs, sections, path, _inline_text(token))
        elif token.type in ("fence", "code_block"):
            _add(paragraphs, sections, path, " ".join(token.content.split()))
        elif token.type == "table_open":
            end = next(j for j in range(i, len(tokens)) if tokens[j].type == "table_close")
            for row in row_texts(_grid(tokens[i:end]), "text"):
                _add(paragraphs, sections, path, row)
            i = end + 1
            continue
        i += 1
    return title, paragraphs, sections


def _add(paragraphs: list[str], sections: list[list[str]], path: list[tuple[int, str]], text: str) -> None:
    text = " ".join(text.split())
    if text:
        paragraphs.append(text)
        sections.append([name for _, name in path])


def _inline_text(token: Token) -> str:
    """The plain text of an inline token: links and emphasis as their words, code as written,
    images as their alt text, raw HTML left out."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


def _grid(tokens: list[Token]) -> Grid:
    header: list[list[str]] = []
    rows: list[list[str]] = []
    in_head = False
    row: list[str] | None = None
    for token in tokens:
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            (header if in_head else rows).append(row)
            row = None
        elif token.type == "inline" and row is not None:
            row.append(cell_text(_inline_text(token)))
    return Grid(header=header, rows=rows)


def _front_matter(text: str, path: Path) -> tuple[dict, str]:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        raise GuideError(f"{path}: front matter is not valid YAML{line}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GuideError(f"{path}: front matter must be 'key: value' lines (e.g. aliases: [claims, land])")
    return data, text[match.end():]


def _string(value: object, path: Path, key: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise GuideError(f"{path}: front matter '{key}' must be text")
    return " ".join(value.split())
