"""``api.php`` over a PageStore: the Action API subset the crawler uses, answered as MediaWiki 1.43
answers it with ``format=json&formatversion=2``.

Supported: ``action=query`` with ``meta=siteinfo`` (``siprop=general|namespaces``), ``list=allpages|allredirects|recentchanges``,
``generator=allpages``, ``titles=`` (with ``redirects``), ``prop=info|categories|redirects``, and
``action=parse`` (``prop=text|categories|displaytitle|revid``). Limits as MediaWiki's (default 10,
``max`` = 500); continuation as MediaWiki's: the ``continue`` object is sent back as it came, its
``continue`` member lists the modules already done, and a generator's batch is produced again
until all its prop modules are done. ``maxlag`` answers with the ``maxlag`` error, ``Retry-After``
and ``X-Database-Lag`` when the store lags. Anything else is an error answer, never a traceback.
"""
from __future__ import annotations

import calendar
import json
import re
import time
from dataclasses import dataclass, field
from typing import Callable

from jarvis_lab.actionapi.store import Change, PageStore, StoredPage, api_timestamp

MAX_LIMIT = 500
DEFAULT_LIMIT = 10
MAX_TITLES = 50
DOCREF = "See https://www.mediawiki.org/wiki/API:Main_page for API usage."
_TIMESTAMP = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})T?(\d{2}):?(\d{2}):?(\d{2})Z?$")


@dataclass
class ApiAnswer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


class ApiError(Exception):
    def __init__(self, code: str, info: str, headers: dict[str, str] | None = None, **extra) -> None:
        super().__init__(info)
        self.code, self.info, self.headers, self.extra = code, info, headers or {}, extra


def dbkey(title: str) -> str:
    return title.replace(" ", "_")


class ActionApi:
    """Answers api.php query strings (already parsed into a dict) from a PageStore."""

    def __init__(self, store: PageStore) -> None:
        self.store = store

    def respond(self, params: dict[str, str]) -> ApiAnswer:
        try:
            if params.get("format") != "json":
                raise ApiError("badvalue", 'Only format=json is served here; use "format=json&formatversion=2".')
            if params.get("formatversion") not in ("2", "latest"):
                raise ApiError("badvalue", "Only formatversion=2 is served here.")
            self._check_lag(params.get("maxlag"))
            action = params.get("action", "help")
            if action == "query":
                data = self._query(params)
            elif action == "parse":
                data = self._parse(params)
            else:
                raise ApiError("badvalue", f'Unrecognized value for parameter "action": {action}.')
            return self._json(data)
        except ApiError as exc:
            error = {"code": exc.code, "info": exc.info, **exc.extra, "docref": DOCREF}
            answer = self._json({"error": error, "servedby": "jarvis-wikiapi"})
            answer.headers.update(exc.headers)
            answer.headers["MediaWiki-API-Error"] = exc.code
            return answer

    @staticmethod
    def _json(data: dict) -> ApiAnswer:
        return ApiAnswer(200, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

    def _check_lag(self, maxlag: str | None) -> None:
        if maxlag is None:
            return
        try:
            limit = int(maxlag)
        except ValueError:
            raise ApiError("badinteger", f'Invalid value "{maxlag}" for integer parameter "maxlag".') from None
        lag = self.store.lag()
        if lag > limit:
            raise ApiError("maxlag", f"Waiting for a database server: {lag:g} seconds lagged.",
                           headers={"Retry-After": str(max(limit, 5)), "X-Database-Lag": str(int(lag))},
                           host="db", lag=lag)

    # ------------------------------------------------------------------ action=query

    def _query(self, params: dict[str, str]) -> dict:
        cont = _Continuation(params)
        query: dict = {}
        result: dict = {"batchcomplete": True}
        metas = _values(params.get("meta"))
        lists = _values(params.get("list"))
        props = _values(params.get("prop"))
        generator = params.get("generator")
        for name in metas:
            if name != "siteinfo":
                raise ApiError("badvalue", f'Unrecognized value for parameter "meta": {name}.')
            if not cont.done(name):
                siprops = _values(params.get("siprop", "general"))
                unknown = [prop for prop in siprops if prop not in ("general", "namespaces")]
                if unknown:
                    raise ApiError("badvalue", f'Unrecognized value for parameter "siprop": {unknown[0]}.')
                if "general" in siprops:
                    query["general"] = self._siteinfo()
                if "namespaces" in siprops:
                    query["namespaces"] = self._namespaces()
                cont.finish(name)
        for name in lists:
            handler = {"allpages": self._allpages, "allredirects": self._allredirects,
                       "recentchanges": self._recentchanges}.get(name)
            if handler is None:
                raise ApiError("badvalue", f'Unrecognized value for parameter "list": {name}.')
            if not cont.done(name):
                query[name] = handler(params, "", cont)

        pages: list[StoredPage | dict] | None = None
        if generator is not None:
            if generator != "allpages":
                raise ApiError("badvalue", f'Unrecognized value for parameter "generator": {generator}.')
            if "titles" in params:
                raise ApiError("invalidparammix", 'The parameters "generator" and "titles" can not be used together.')
            listed = self._allpages(params, "g", cont, generating=True)
            pages = [self.store.page(item["title"]) for item in listed]
        elif "titles" in params:
            pages = self._resolve_titles(params, query)
        if props and pages is None:
            raise ApiError("missingparam", 'The "prop" module needs "titles" or a "generator".')
        if pages is not None:
            query["pages"] = self._page_props(pages, props, params, cont)
        if cont.props_pending:
            del result["batchcomplete"]   # the generator's batch is not complete yet
        if not cont.empty:
            result["continue"] = cont.to_json(generator is not None)
        if query:
            result["query"] = query
        return result

    def _siteinfo(self) -> dict:
        site = self.store.site_info()
        return {"mainpage": site.mainpage, "base": site.server + site.articlepath.replace("$1", dbkey(site.mainpage)),
                "sitename": site.sitename, "generator": site.generator, "lang": site.lang,
                "server": site.server, "servername": site.server.split("://", 1)[-1],
                "articlepath": site.articlepath, "scriptpath": site.scriptpath, "script": f"{site.scriptpath}/index.php",
                "time": api_timestamp(time.time()), "maxarticlesize": 2097152}

    def _namespaces(self) -> dict:
        """siprop=namespaces as MediaWiki writes it: by number, as strings."""
        return {str(number): {"id": number, "case": "first-letter", "name": name, "subpages": number != 0,
                              "canonical": name, "content": number == 0, "nonincludable": False}
                for number, name in self.store.site_info().namespaces}

    def _allpages(self, params: dict[str, str], g: str, cont: "_Continuation", generating: bool = False) -> list[dict]:
        p = g + "ap"
        namespace = _int(params, p + "namespace", 0)
        redirects = params.get(p + "filterredir", "all")
        if redirects not in ("all", "redirects", "nonredirects"):
            raise ApiError("badvalue", f'Unrecognized value for parameter "{p}filterredir": {redirects}.')
        limit = _limit(params, p + "limit")
        start = params.get(p + "continue") or params.get(p + "from")
        pages = []
        for title in self.store.titles(namespace):
            page = self.store.page(title)
            if page is None or (redirects == "redirects" and page.redirect_to is None) \
                    or (redirects == "nonredirects" and page.redirect_to is not None):
                continue
            pages.append(page)
        pages.sort(key=_sort_key)
        if start:
            pages = [page for page in pages if _sort_key(page) >= dbkey(start)]
        if len(pages) > limit:
            cont.add(p + "continue", _sort_key(pages[limit]), generator=generating)
        elif not generating:
            cont.finish("allpages")
        return [{"pageid": page.pageid, "ns": page.ns, "title": page.title} for page in pages[:limit]]

    def _allredirects(self, params: dict[str, str], g: str, cont: "_Continuation") -> list[dict]:
        namespace = _int(params, "arnamespace", 0)
        props = set(_values(params.get("arprop", "title")))
        limit = _limit(params, "arlimit")
        pairs = []
        for title in self.store.titles(namespace):
            page = self.store.page(title)
            if page is not None and page.redirect_to is not None:
                pairs.append((dbkey(page.redirect_to), page.pageid, page))
        pairs.sort(key=lambda pair: (pair[0], pair[1]))
        if params.get("arcontinue"):
            target, _, fromid = params["arcontinue"].rpartition("|")
            pairs = [p for p in pairs if (p[0], p[1]) >= (target, int(fromid or 0))]
        if len(pairs) > limit:
            cont.add("arcontinue", f"{pairs[limit][0]}|{pairs[limit][1]}")
        else:
            cont.finish("allredirects")
        items = []
        for _, fromid, page in pairs[:limit]:
            item: dict = {"ns": self._namespace_of(page.redirect_to)}
            if "ids" in props:
                item["fromid"] = fromid
            if "title" in props:
                item["title"] = page.redirect_to
            items.append(item)
        return items

    def _recentchanges(self, params: dict[str, str], g: str, cont: "_Continuation") -> list[dict]:
        newer = params.get("rcdir", "older") == "newer"
        limit = _limit(params, "rclimit")
        props = set(_values(params.get("rcprop", "title|timestamp|ids")))
        types = set(_values(params.get("rctype", "edit|new|log|categorize")))
        namespaces = {int(n) for n in _values(params.get("rcnamespace"))} if params.get("rcnamespace") not in (None, "*") else None
        start = _parse_timestamp(params.get("rcstart"), "rcstart")
        end = _parse_timestamp(params.get("rcend"), "rcend")
        changes = list(self.store.changes())
        changes.sort(key=lambda c: (int(c.timestamp), c.rcid), reverse=not newer)
        selected: list[Change] = []
        for change in changes:
            second = int(change.timestamp)
            if start is not None and (second < start if newer else second > start):
                continue
            if end is not None and (second > end if newer else second < end):
                continue
            if change.type not in types or (namespaces is not None and change.ns not in namespaces):
                continue
            selected.append(change)
        if params.get("rccontinue"):
            stamp, _, rcid = params["rccontinue"].partition("|")
            key = (_parse_timestamp(stamp, "rccontinue"), int(rcid or 0))
            selected = [c for c in selected if ((int(c.timestamp), c.rcid) >= key if newer
                                                else (int(c.timestamp), c.rcid) <= key)]
        if len(selected) > limit:
            following = selected[limit]
            cont.add("rccontinue", f"{time.strftime('%Y%m%d%H%M%S', time.gmtime(following.timestamp))}|{following.rcid}")
        else:
            cont.finish("recentchanges")
        return [_change_json(change, props) for change in selected[:limit]]

    def _resolve_titles(self, params: dict[str, str], query: dict) -> list[StoredPage | dict]:
        titles = [t for t in params["titles"].split("|") if t.strip()]
        if len(titles) > MAX_TITLES:
            raise ApiError("toomanyvalues", f'Too many values supplied for parameter "titles". The limit is {MAX_TITLES}.')
        normalized, redirects, pages, seen = [], [], [], set()
        for raw in titles:
            title = self.store.normalize(raw)
            if title != raw:
                normalized.append({"fromencoded": False, "from": raw, "to": title})
            page = self.store.page(title)
            if page is not None and page.redirect_to is not None and _flag(params, "redirects"):
                redirects.append({"from": page.title, "to": page.redirect_to})
                title, page = page.redirect_to, self.store.page(page.redirect_to)
            if title in seen:
                continue
            seen.add(title)
            pages.append(page if page is not None else {"ns": self._namespace_of(title), "title": title, "missing": True})
        if normalized:
            query["normalized"] = normalized
        if redirects:
            query["redirects"] = redirects
        return pages

    def _page_props(self, pages: list[StoredPage | dict], props: list[str], params: dict[str, str],
                    cont: "_Continuation") -> list[dict]:
        existing = sorted((p for p in pages if isinstance(p, StoredPage)), key=lambda p: p.pageid)
        out: dict[int, dict] = {page.pageid: {"pageid": page.pageid, "ns": page.ns, "title": page.title}
                                for page in existing}
        for name in props:
            if name not in ("info", "categories", "redirects"):
                raise ApiError("badvalue", f'Unrecognized value for parameter "prop": {name}.')
            if cont.done(name):
                continue
            if name == "info":
                for page in existing:
                    out[page.pageid].update(_info_json(page))
                cont.finish(name, prop=True)
            elif name == "categories":
                pairs = [(page.pageid, dbkey(c)) for page in existing for c in sorted(page.categories, key=dbkey)]
                self._paged_prop(pairs, "cl", params, cont, name, out,
                                 lambda pageid, key: {"ns": 14, "title": "Category:" + key.replace("_", " ")})
            elif name == "redirects":
                targets = {page.title: page.pageid for page in existing}
                namespaces = {int(n) for n in _values(params.get("rdnamespace"))} if params.get("rdnamespace") else None
                pairs = []
                for page in self._all_pages({p.ns for p in existing}):
                    if page.redirect_to in targets and (namespaces is None or page.ns in namespaces):
                        pairs.append((targets[page.redirect_to], page.pageid, page))
                pairs.sort(key=lambda pair: pair[:2])
                by_id = {pair[1]: pair[2] for pair in pairs}
                self._paged_prop([(t, r) for t, r, _ in pairs], "rd", params, cont, name, out,
                                 lambda pageid, rid: {"pageid": rid, "ns": by_id[rid].ns, "title": by_id[rid].title})
        missing = [p for p in pages if isinstance(p, dict)]
        return list(out.values()) + missing

    @staticmethod
    def _paged_prop(pairs: list[tuple], prefix: str, params: dict[str, str], cont: "_Continuation", name: str,
                    out: dict[int, dict], item: Callable[[int, object], dict]) -> None:
        """One prop module's (pageid, key) pairs, sorted, limited and continued as MediaWiki does."""
        limit = _limit(params, prefix + "limit")
        if params.get(prefix + "continue"):
            first, _, second = params[prefix + "continue"].partition("|")
            start = (int(first), int(second) if prefix == "rd" else second)
            pairs = [pair for pair in pairs if pair >= start]
        if len(pairs) > limit:
            cont.add(prefix + "continue", f"{pairs[limit][0]}|{pairs[limit][1]}", prop=True)
        else:
            cont.finish(name, prop=True)
        key = "categories" if prefix == "cl" else "redirects"
        for pageid, value in pairs[:limit]:
            out[pageid].setdefault(key, []).append(item(pageid, value))

    def _all_pages(self, namespaces: set[int] | None = None) -> list[StoredPage]:
        pages = []
        for namespace in sorted((namespaces or set()) | {0}):
            pages += [p for p in map(self.store.page, self.store.titles(namespace)) if p is not None]
        return pages

    def _namespace_of(self, title: str | None) -> int:
        page = self.store.page(title) if title else None
        return page.ns if page is not None else 0

    # ------------------------------------------------------------------ action=parse

    def _parse(self, params: dict[str, str]) -> dict:
        props = set(_values(params.get("prop", "text|categories|displaytitle|revid")))
        if "page" in params:
            title = self.store.normalize(params["page"])
            page = self.store.page(title)
        elif "pageid" in params:
            wanted = _int(params, "pageid", 0)
            page = next((p for p in self._all_pages() if p.pageid == wanted), None)
        else:
            raise ApiError("missingparam", 'The "page" or "pageid" parameter must be set.')
        if page is not None and page.redirect_to is not None and _flag(params, "redirects"):
            redirected = [{"from": page.title, "to": page.redirect_to}]
            page = self.store.page(page.redirect_to)
        else:
            redirected = []
        if page is None:
            raise ApiError("missingtitle", "The page you specified doesn't exist.")
        parsed: dict = {"title": page.title, "pageid": page.pageid}
        if redirected:
            parsed["redirects"] = redirected
        if "revid" in props:
            parsed["revid"] = page.revid
        if "text" in props:
            parsed["text"] = self.store.parser_output(page.title) if page.redirect_to is None else ""
        if "categories" in props:
            parsed["categories"] = [{"sortkey": "", "category": dbkey(c)} for c in page.categories]
        if "displaytitle" in props:
            parsed["displaytitle"] = page.title
        return {"parse": parsed}


class _Continuation:
    """The request's ``continue`` state and the one this answer sends back."""

    def __init__(self, params: dict[str, str]) -> None:
        raw = params.get("continue", "")
        generator_part, _, done = raw.partition("||")
        self._done_before = set(filter(None, done.split("|")))
        self._request = params
        self.params: dict[str, str] = {}
        self.finished: set[str] = set()
        self.props_pending = False
        self._generator_params: dict[str, str] = {}

    def done(self, module: str) -> bool:
        return module in self._done_before

    def finish(self, module: str, prop: bool = False) -> None:
        """The module has given all it has (prop modules: for this generator batch)."""
        self.finished.add(module)

    def add(self, name: str, value: str, generator: bool = False, prop: bool = False) -> None:
        if generator:
            self._generator_params[name] = value
        else:
            self.params[name] = value
        if prop:
            self.props_pending = True

    def to_json(self, has_generator: bool) -> dict:
        data = dict(self.params)
        if self.props_pending:
            # Same batch again: the generator's parameters as this request had them.
            generator = {k: v for k, v in self._request.items() if k.startswith("gap") and k.endswith("continue")}
            done = sorted(self._done_before | self.finished)
        else:
            generator = self._generator_params
            # A new batch: the prop modules run again on it; the other modules done stay done.
            done = sorted((self._done_before | self.finished) - {"info", "categories", "redirects"})
        data.update(generator)
        data["continue"] = ("|".join(generator) if has_generator and generator else "-") + "||" + "|".join(done)
        return data

    @property
    def empty(self) -> bool:
        return not self.params and not self._generator_params


def _info_json(page: StoredPage) -> dict:
    info = {"contentmodel": "wikitext", "pagelanguage": "en", "pagelanguagehtmlcode": "en", "pagelanguagedir": "ltr",
            "touched": api_timestamp(page.touched), "lastrevid": page.revid, "length": page.length}
    if page.redirect_to is not None:
        info["redirect"] = True
    return info


def _change_json(change: Change, props: set[str]) -> dict:
    item: dict = {"type": change.type}
    if "title" in props:
        item.update(ns=change.ns, title=change.title)
    if "ids" in props:
        item.update(pageid=change.pageid, revid=change.revid, old_revid=change.old_revid, rcid=change.rcid)
    if "timestamp" in props:
        item["timestamp"] = api_timestamp(change.timestamp)
    if "redirect" in props and change.redirect:
        item["redirect"] = True
    if "loginfo" in props and change.type == "log":
        item.update(logid=change.logid, logtype=change.logtype, logaction=change.logaction,
                    logparams=dict(change.logparams))
    return item


def _values(raw: str | None) -> list[str]:
    return [v for v in (raw or "").split("|") if v]


def _flag(params: dict[str, str], name: str) -> bool:
    """MediaWiki booleans: present means true (any value, even empty)."""
    return name in params


def _int(params: dict[str, str], name: str, default: int) -> int:
    try:
        return int(params.get(name, default))
    except ValueError:
        raise ApiError("badinteger", f'Invalid value "{params[name]}" for integer parameter "{name}".') from None


def _limit(params: dict[str, str], name: str) -> int:
    raw = params.get(name)
    if raw is None:
        return DEFAULT_LIMIT
    if raw == "max":
        return MAX_LIMIT
    return max(1, min(MAX_LIMIT, _int(params, name, DEFAULT_LIMIT)))


def _parse_timestamp(raw: str | None, name: str) -> int | None:
    if not raw:
        return None
    match = _TIMESTAMP.match(raw.strip())
    if match is None:
        raise ApiError("badtimestamp", f'Invalid value "{raw}" for timestamp parameter "{name}".')
    return calendar.timegm(tuple(int(g) for g in match.groups()) + (0, 0, 0))


def _sort_key(page: StoredPage) -> str:
    """What allpages sorts and continues by: the title without its namespace prefix, as a dbkey."""
    return dbkey(page.title if page.ns == 0 else page.title.partition(":")[2])
