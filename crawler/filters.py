"""Which pages are stored, what kind of page each is, and which links are worth following."""
from __future__ import annotations

from jarvis.crawler.extract import ExtractedPage
from jarvis.crawler.page_kinds import classify_page
from jarvis.crawler.settings import CrawlSettings
from jarvis.crawler.urls import Scope, has_prefix, split_namespace

# Skip reasons of pages whose links are still followed (hubs that link to articles).
FOLLOW_LINKS_OF = frozenset({None, "main page", "disambiguation", "no prose"})


def skip_reason(page: ExtractedPage, settings: CrawlSettings) -> str | None:
    """Why a page is not stored ("namespace", "main page", "disambiguation", "no prose"), or None
    for a page to keep. Pages about spin-off games are kept (their kind says what they are),
    also in the spin-off namespaces ("Minecraft Dungeons:Cow"); other namespaces are not."""
    if page.is_main_page:
        return "main page"
    if not has_prefix(page.title, settings.spin_off_namespaces):
        if page.namespace is not None:
            if page.namespace != 0:
                return "namespace"
        elif has_prefix(page.title, settings.non_article_namespaces):
            return "namespace"
    if page.is_disambiguation:
        return "disambiguation"
    if not page.paragraphs:
        return "no prose"
    return None


def page_kind(page: ExtractedPage, settings: CrawlSettings) -> str:
    """The kind of a page (crawler.page_kinds), from what the extracted page shows."""
    lead = next((text for text, path in zip(page.paragraphs, page.sections) if not path), "")
    return classify_page(page.title, namespace=page.namespace, categories=page.categories, lead=lead,
                         hatnotes=page.hatnotes, is_disambiguation=page.is_disambiguation,
                         spin_off_games=settings.spin_off_games, spin_off_namespaces=settings.spin_off_namespaces)


def followable_links(page: ExtractedPage, scope: Scope, settings: CrawlSettings) -> list[str]:
    """The page's links that may lead to articles: in scope (host, article path, no query) and
    not into a non-article namespace. Saves requests; fetched pages are still checked."""
    prefixes = {p.casefold() for p in settings.non_article_namespaces}
    links = []
    for url in page.links:
        title = scope.title_of(url)
        if title is not None and split_namespace(title)[0].casefold() not in prefixes:
            links.append(url)
    return links
