"""Which pages are articles about Minecraft itself, and which links are worth following."""
from __future__ import annotations

import re

from crawler.extract import ExtractedPage
from crawler.settings import CrawlSettings
from crawler.urls import Scope, has_prefix, split_namespace

# Skip reasons of pages whose links are still followed (hubs that link to articles).
FOLLOW_LINKS_OF = frozenset({None, "main page", "disambiguation", "no prose"})

_NON_WORD = re.compile(r"[\W_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def skip_reason(page: ExtractedPage, settings: CrawlSettings) -> str | None:
    """Why a page is not stored as an article ("spin-off", "namespace", "main page",
    "disambiguation", "no prose"), or None for an article to keep."""
    if page.is_main_page:
        return "main page"
    if has_prefix(page.title, settings.spin_off_namespaces):
        return "spin-off"
    if page.namespace is not None:
        if page.namespace != 0:
            return "namespace"
    elif has_prefix(page.title, settings.non_article_namespaces):
        return "namespace"
    if is_about_spin_off(page, settings.spin_off_games):
        return "spin-off"
    if page.is_disambiguation:
        return "disambiguation"
    if not page.paragraphs:
        return "no prose"
    return None


def is_about_spin_off(page: ExtractedPage, games: tuple[str, ...]) -> bool:
    """An article about a spin-off game: its title or a category starts with the game's name
    ("Minecraft Dungeons", "Minecraft Earth mobs"), or its lead sentence names the game."""
    names = [_words(game) for game in games]
    labels = [_words(page.title)] + [_words(category) for category in page.categories]
    if any(label == name or label.startswith(name + " ") for label in labels for name in names):
        return True
    if page.paragraphs:
        lead = f" {_words(_SENTENCE_END.split(page.paragraphs[0], maxsplit=1)[0])} "
        return any(f" {name} " in lead for name in names)
    return False


def followable_links(page: ExtractedPage, scope: Scope, settings: CrawlSettings) -> list[str]:
    """The page's links that may lead to articles: in scope (host, article path, no query) and
    not into a non-article or spin-off namespace. Saves requests; fetched pages are still checked."""
    prefixes = {p.casefold() for p in settings.non_article_namespaces + settings.spin_off_namespaces}
    links = []
    for url in page.links:
        title = scope.title_of(url)
        if title is not None and split_namespace(title)[0].casefold() not in prefixes:
            links.append(url)
    return links


def _words(text: str) -> str:
    """Case-folded words only: "Minecraft: Story Mode" -> "minecraft story mode"."""
    return _NON_WORD.sub(" ", text.casefold()).strip()
