"""Whole pages of the sample wiki: a body (``body.py``) in the MediaWiki 1.43 Vector legacy skin.

``Renderer`` builds each page's ``#mw-content-text`` (articles, duplicates, Main Page,
disambiguation, category, file, template and other pages, redirects shown with ``?redirect=no``,
missing pages) and puts it into ``templates/page.html``: ``#firstHeading``, ``RLCONF``, tabs,
sidebar, category links, footer.
"""
from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from markupsafe import Markup

from jarvis_lab.samplewiki.body import IMAGE_SIZE, Body, esc, esc_attr, image_path, wrap_parser_output
from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.source import Link, parse_body
from jarvis_lab.samplewiki.titles import (
    MAIN_PAGE, SITE_NAME, css_class, dbkey, index_php, namespace_number, normalize_title, split_namespace,
    talk_title, url_path,
)

MEDIAWIKI_VERSION = "1.43.1"
API_PATH = "/api.php"                     # the Action API (wgScriptPath is "")
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
DISAMBIGUATION_NOTICE = ("This disambiguation page lists articles associated with the same title. If an internal "
                         "link led you here, you may wish to change the link to point directly to the intended article.")


def page_id(title: str) -> int:
    """A stable page id (wgArticleId) for a title."""
    return zlib.crc32(title.encode("utf-8")) % 900_000 + 100_000


@dataclass
class HtmlPage:
    """One rendered response."""
    status: int
    html: str
    last_modified: float


@dataclass
class PageView:
    """What the skin needs to show one page (a view of a title, possibly through a redirect)."""
    title: str
    content_html: str                     # inside #mw-content-text
    status: int = 200
    last_modified: float = 0.0
    categories: list[str] = field(default_factory=list)
    redirected_from: str | None = None
    is_redirect: bool = False             # a redirect page shown with ?redirect=no
    exists: bool = True
    action: str = "view"
    heading: str | None = None            # #firstHeading text when it is not the title
    subtitle_html: str = ""
    robots: str = "max-image-preview:standard"


class Renderer:
    """Renders the pages of one wiki for one base URL (canonical links are absolute)."""

    def __init__(self, wiki: SampleWiki, base_url: str) -> None:
        self.wiki = wiki
        self.base_url = base_url.rstrip("/")
        self.templates = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                                            undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        self._article_bodies: dict[str, str] = {}   # article title -> body HTML (shared with its duplicates)

    # ------------------------------------------------------------------ page bodies

    def article_body(self, title: str) -> str:
        """An article's .mw-parser-output; a duplicate page shows these very bytes."""
        if title not in self._article_bodies:
            article = self.wiki.articles[title]
            body = Body(self.wiki, title)
            notes = self.wiki.generated_hatnotes(title) + ([article.hatnote] if article.hatnote else [])
            parts = [body.hatnote(note) for note in notes]
            if article.infobox:
                parts.append(body.infobox(article))
            parts.append(body.blocks(article.blocks))
            parts.append(body.navbox(article.group))
            self._article_bodies[title] = wrap_parser_output("\n".join(parts))
        return self._article_bodies[title]

    def _blocks_body(self, title: str, blocks: list[Block], extra: str = "") -> str:
        body = Body(self.wiki, title)
        return wrap_parser_output(body.blocks(blocks) + extra)

    def forget(self, title: str) -> None:
        """Drop what was rendered for an article, after it changed."""
        self._article_bodies.pop(title, None)

    def content_html(self, title: str) -> str:
        """#mw-content-text of an existing, non-redirect page."""
        kind = self.wiki.kind(title)
        if kind == "article":
            return self.article_body(title)
        if kind == "duplicate":
            return self.article_body(self.wiki.duplicates[title])
        if kind == "main":
            body = Body(self.wiki, title)
            navboxes = "\n".join(body.navbox(group) for group in self.wiki.templates.values())
            return wrap_parser_output(body.blocks(self.wiki.main_page, toc=False) + "\n" + navboxes)
        if kind == "disambiguation":
            notice = f'\n<div id="disambig" class="disambig dablink noprint" role="note">{esc(DISAMBIGUATION_NOTICE)}</div>'
            return self._blocks_body(title, self.wiki.disambiguations[title], notice)
        if kind == "page":
            return self._blocks_body(title, self.wiki.pages[title])
        if kind == "template":
            body = Body(self.wiki, title)
            group = self.wiki.templates[title]
            doc = parse_body(f"This navigation box is placed at the bottom of every article in the {group} group.")
            return wrap_parser_output(body.navbox(group) + "\n" + body.blocks(doc))
        if kind == "category":
            return wrap_parser_output("") + self._category_listing(title)
        if kind == "file":
            return self._file_page(title)
        raise KeyError(title)

    def _category_listing(self, title: str) -> str:
        name = split_namespace(title)[1]
        members = sorted(self.wiki.categories[name], key=str.casefold)
        groups: dict[str, list[str]] = {}
        for member in members:
            groups.setdefault(member[:1].upper(), []).append(member)
        body = Body(self.wiki, title)
        columns = "".join(
            f'<div class="mw-category-group"><h3>{esc(letter)}</h3>\n<ul>'
            + "".join(f"<li>{body.link(Link(m, '', m))}</li>" for m in group) + "</ul></div>"
            for letter, group in groups.items())
        n = len(members)
        return (f'<div class="mw-category-generated" lang="en" dir="ltr"><div id="mw-pages">\n'
                f'<h2>Pages in category "{esc(name)}"</h2>\n'
                f'<p>The following {n} page{"s" if n != 1 else ""} {"are" if n != 1 else "is"} in this category, '
                f'out of {n} total.\n</p><div lang="en" dir="ltr" class="mw-content-ltr">'
                f'<div class="mw-category mw-category-columns">{columns}</div></div>\n</div></div>')

    def _file_page(self, title: str) -> str:
        article = self.wiki.files[title]
        name = split_namespace(title)[1]
        src = esc_attr(image_path(title))
        body = Body(self.wiki, title)
        return ('<ul id="filetoc" role="navigation"><li><a href="#file">File</a></li>'
                '<li><a href="#filelinks">File usage</a></li></ul>'
                f'<div class="fullImageLink" id="file"><a href="{src}"><img alt="{esc_attr(title)}" src="{src}" decoding="async" '
                f'width="{IMAGE_SIZE}" height="{IMAGE_SIZE}"></a></div>'
                f'<div class="fullMedia"><bdi dir="ltr"><a href="{src}" class="internal" title="{esc_attr(name)}">{esc(name)}</a>'
                '</bdi> <span class="fileInfo">(placeholder image, MIME type: <span class="mime-type">image/png</span>)</span></div>'
                f'<div id="mw-imagepage-content" lang="en" dir="ltr" class="mw-content-ltr">'
                + wrap_parser_output(f"<p>Picture of the {esc(article)} used in its infobox.\n</p>") + "</div>"
                '<h2 id="filelinks">File usage</h2>\n<div id="mw-imagepage-section-linkstoimage">'
                '<p>The following page uses this file:\n</p><ul class="mw-imagepage-linkstoimage">'
                f'<li class="mw-imagepage-linkstoimage-ns0">{body.link(Link(article, "", article))}</li></ul></div>')

    # ------------------------------------------------------------------ whole pages

    def last_modified(self, title: str) -> float:
        target = self.wiki.duplicates.get(title, self.wiki.redirects.get(title, title))
        article = self.wiki.articles.get(target)
        return article.mtime if article else self.wiki.newest_mtime

    def page(self, title: str, redirected_from: str | None = None) -> HtmlPage:
        """An existing page (not a redirect title), shown directly or reached through a redirect."""
        subtitle = ""
        if redirected_from:
            link = (f'<a href="{esc_attr(url_path(redirected_from))}?redirect=no" class="mw-redirect" '
                    f'title="{esc_attr(redirected_from)}">{esc(redirected_from)}</a>')
            subtitle = f'<span class="mw-redirectedfrom">(Redirected from {link})</span>'
        return self.view(PageView(title=title, content_html=self.content_html(title),
                                  last_modified=self.last_modified(title), categories=self.wiki.category_names(title),
                                  redirected_from=redirected_from, subtitle_html=subtitle))

    def redirect_page(self, title: str) -> HtmlPage:
        """A redirect itself, as /w/Title?redirect=no shows it."""
        target = self.wiki.redirects[title]
        link = Body(self.wiki, title).link(Link(target, "", target))
        content = wrap_parser_output(f'<div class="redirectMsg"><p>Redirect to:</p><ul class="redirectText">'
                                     f'<li>{link}</li></ul></div>')
        return self.view(PageView(title=title, content_html=content, is_redirect=True,
                                  last_modified=self.last_modified(title),
                                  subtitle_html='<span id="redirectsub">Redirect page</span>'))

    def missing_page(self, title: str) -> HtmlPage:
        search = url_path(f"Special:Search/{title}")
        content = ('<div class="noarticletext mw-content-ltr" dir="ltr" lang="en">\n<p>There is currently no text in this '
                   f'page. You can <a href="{esc_attr(search)}" title="{esc_attr("Special:Search/" + title)}">search for this page '
                   'title</a> in other pages.\n</p></div>')
        return self.view(PageView(title=title, content_html=content, status=404, exists=False,
                                  last_modified=self.wiki.newest_mtime, robots="noindex,nofollow"))

    def message_page(self, title: str, heading: str, message: str, status: int = 200, action: str = "view") -> HtmlPage:
        """A page that only says something: special pages, edit and history views."""
        return self.view(PageView(title=title, heading=heading, status=status, action=action,
                                  content_html=f"<p>{esc(message)}\n</p>", robots="noindex,nofollow",
                                  last_modified=self.wiki.newest_mtime))

    def view(self, view: PageView) -> HtmlPage:
        title = view.title
        namespace, rest = split_namespace(title)
        number = namespace_number(title)
        exists = view.exists and number >= 0
        ids = page_id(title) if exists else 0
        rlconf = {
            "wgBreakFrames": False, "wgSeparatorTransformTable": ["", ""], "wgDigitTransformTable": ["", ""],
            "wgDefaultDateFormat": "dmy",
            "wgCanonicalNamespace": dbkey(namespace),
            "wgCanonicalSpecialPageName": rest.split("/")[0] if number < 0 else False,
            "wgNamespaceNumber": number,
            "wgPageName": dbkey(title),
            "wgTitle": rest,
            "wgCurRevisionId": ids, "wgRevisionId": ids, "wgArticleId": ids,
            "wgIsArticle": exists and view.action == "view",
            "wgIsRedirect": view.is_redirect,
            "wgAction": view.action,
            "wgUserName": None, "wgUserGroups": ["*"],
            "wgCategories": view.categories,
            "wgPageViewLanguage": "en", "wgPageContentLanguage": "en", "wgPageContentModel": "wikitext",
            "wgRelevantPageName": dbkey(title), "wgRelevantArticleId": ids,
            "wgIsProbablyEditable": False, "wgRelevantPageIsProbablyEditable": False,
            "wgRestrictionEdit": [], "wgRestrictionMove": [],
            "wgSiteName": SITE_NAME,
            "wgIsMainPage": title == MAIN_PAGE,
            "wgScriptPath": "",
        }
        if view.redirected_from:
            rlconf["wgRedirectedFrom"] = dbkey(view.redirected_from)
            rlconf["wgInternalRedirectTargetUrl"] = url_path(title)
        rlconf_json = json.dumps(rlconf, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
        space = "ns-special" if number < 0 else ("ns-talk" if number % 2 else "ns-subject")
        page_class = css_class(title)
        context = {
            "html_title": SITE_NAME if title == MAIN_PAGE else f"{view.heading or title} – {SITE_NAME}",
            "heading_html": Markup(self._heading_html(view)),
            "rlconf_json": Markup(rlconf_json),
            "mediawiki_version": MEDIAWIKI_VERSION,
            "robots": view.robots,
            "canonical_url": self.base_url + url_path(title),
            "api_url": self.base_url + API_PATH,
            "body_class": (f"skin-vector-legacy mediawiki ltr sitedir-ltr mw-hide-empty-elt ns-{number} {space} "
                           f"page-{page_class} rootpage-{page_class} skin-vector action-{view.action}"),
            "site_name": SITE_NAME,
            "subtitle_html": Markup(view.subtitle_html),
            "content_html": Markup(view.content_html),
            "categories": [{"name": c, "title": f"Category:{c}", "href": url_path(f"Category:{c}")}
                           for c in view.categories],
            "create_account_href": index_php("Special:CreateAccount", returnto=dbkey(title)),
            "login_href": index_php("Special:UserLogin", returnto=dbkey(title)),
            "namespace_tabs": self._namespace_tabs(title, exists),
            "view_tabs": self._view_tabs(title, view.action) if number >= 0 else [],
            "tools": self._tools(title, exists),
            "last_edited": edited_date(view.last_modified) if exists else "",
        }
        html_text = self.templates.get_template("page.html").render(context)
        return HtmlPage(status=view.status, html=html_text, last_modified=view.last_modified)

    # ------------------------------------------------------------------ skin parts

    @staticmethod
    def _heading_html(view: PageView) -> str:
        if view.heading:
            return esc(view.heading)
        namespace, rest = split_namespace(view.title)
        prefix = f'<span class="mw-page-title-namespace">{esc(namespace)}</span><span class="mw-page-title-separator">:</span>' if namespace else ""
        return f'{prefix}<span class="mw-page-title-main">{esc(rest)}</span>'

    def _namespace_tabs(self, title: str, exists: bool) -> list[dict]:
        namespace, rest = split_namespace(title)
        number = namespace_number(title)
        if number < 0:
            return [{"id": "ca-nstab-special", "classes": "selected ", "href": url_path(title), "new": False,
                     "tooltip": "This is a special page, and it cannot be edited", "label": "Special page"}]
        talk = talk_title(title) if number % 2 == 0 else title
        subject = title if number % 2 == 0 else normalize_title(
            f"{namespace[:-len(' talk')]}:{rest}" if namespace != "Talk" else rest)
        tab_key = {0: "main", 2: "user", 4: "project", 6: "image", 10: "template", 12: "help", 14: "category"}
        labels = {0: "Page", 2: "User page", 4: "Project page", 6: "File", 10: "Template", 12: "Help", 14: "Category"}
        subject_number = namespace_number(subject)
        tabs = []
        for tab_title, tab_id, label in [
            (subject, "ca-nstab-" + tab_key.get(subject_number, css_class(namespace).lower()), labels.get(subject_number, "Page")),
            (talk, "ca-talk", "Discussion"),
        ]:
            tab_exists = exists if tab_title == title else self.wiki.exists(tab_title)
            selected = tab_title == title
            tabs.append({
                "id": tab_id, "label": label, "new": not tab_exists,
                "classes": ("selected " if selected else "") + ("new " if not tab_exists else ""),
                "href": url_path(tab_title) if tab_exists else index_php(tab_title, action="edit", redlink="1"),
                "tooltip": tab_title if tab_exists else f"{tab_title} (page does not exist)",
            })
        return tabs

    @staticmethod
    def _view_tabs(title: str, action: str) -> list[dict]:
        return [
            {"id": "ca-view", "label": "Read", "href": url_path(title), "tooltip": "",
             "classes": "selected " if action == "view" else ""},
            {"id": "ca-viewsource", "label": "View source", "href": index_php(title, action="edit"),
             "tooltip": "This page is protected. You can view its source", "classes": "selected " if action == "edit" else ""},
            {"id": "ca-history", "label": "View history", "href": index_php(title, action="history"),
             "tooltip": "Past revisions of this page", "classes": "selected " if action == "history" else ""},
        ]

    @staticmethod
    def _tools(title: str, exists: bool) -> list[dict]:
        tools = [{"id": "t-specialpages", "label": "Special pages", "href": url_path("Special:SpecialPages")}]
        if namespace_number(title) >= 0:
            tools.insert(0, {"id": "t-whatlinkshere", "label": "What links here",
                             "href": url_path(f"Special:WhatLinksHere/{title}")})
        if exists and namespace_number(title) >= 0:
            tools += [{"id": "t-permalink", "label": "Permanent link", "href": index_php(title, oldid=str(page_id(title)))},
                      {"id": "t-info", "label": "Page information", "href": index_php(title, action="info")}]
        return tools


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def edited_date(timestamp: float) -> str:
    """"4 March 2024, at 10:12" (UTC), as the footer of a MediaWiki page says it."""
    t = time.gmtime(timestamp)
    return f"{t.tm_mday} {_MONTHS[t.tm_mon - 1]} {t.tm_year}, at {t.tm_hour:02d}:{t.tm_min:02d}"

