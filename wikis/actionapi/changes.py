"""Recent changes for a page store whose pages change at run time (tests, mirrors).

``ChangeLog`` hands out revision ids and keeps the list=recentchanges rows the way MediaWiki
records them: an edit or a new page is a row with a new revision id; a move is a "move" log row
on the old title whose logparams name the new one (the page keeps its page id); a deletion is a
"delete" log row. A store calls it when it changes a page and serves ``rows()`` as ``changes()``;
``LoggedStore`` does that for the stores served here.
"""
from __future__ import annotations

import itertools
import threading
import time

from jarvis_lab.actionapi.store import Change, SiteInfo


class ChangeLog:
    def __init__(self, first_id: int = 10_000_000) -> None:
        self._rows: list[Change] = []
        self._revisions: dict[str, int] = {}     # title -> revision id, for pages changed at run time
        self._page_ids: dict[str, int] = {}      # title -> page id, for pages moved there
        self._ids = itertools.count(first_id)
        self._lock = threading.Lock()

    def page_id(self, title: str, original: int) -> int:
        """The page id of title: original, unless a page moved there (it keeps its own id)."""
        return self._page_ids.get(title, original)

    def revision(self, title: str, original: int) -> int:
        """The latest revision id of title: original, unless it changed at run time."""
        return self._revisions.get(title, original)

    def edited(self, title: str, ns: int, pageid: int, old_revid: int, new: bool = False, redirect: bool = False) -> None:
        with self._lock:
            revid = next(self._ids)
            self._revisions[title] = revid
            self._rows.append(Change(rcid=revid, type="new" if new else "edit", ns=ns, title=title, pageid=pageid,
                                     revid=revid, old_revid=0 if new else old_revid, timestamp=time.time(),
                                     redirect=redirect))

    def moved(self, old: str, new: str, ns: int, new_ns: int, pageid: int, revid: int) -> None:
        """The page at old is now at new, with its page id and revisions; old is a redirect."""
        with self._lock:
            self._page_ids.pop(old, None)
            self._revisions.pop(old, None)
            self._page_ids[new] = pageid
            self._revisions[new] = revid
            number = next(self._ids)
            self._rows.append(Change(rcid=number, type="log", ns=ns, title=old, pageid=pageid, revid=0, old_revid=0,
                                     timestamp=time.time(), redirect=True, logid=number, logtype="move",
                                     logaction="move", logparams={"target_ns": new_ns, "target_title": new}))

    def deleted(self, title: str, ns: int) -> None:
        with self._lock:
            self._page_ids.pop(title, None)
            self._revisions.pop(title, None)
            number = next(self._ids)
            self._rows.append(Change(rcid=number, type="log", ns=ns, title=title, pageid=0, revid=0, old_revid=0,
                                     timestamp=time.time(), logid=number, logtype="delete", logaction="delete"))

    def rows(self) -> list[Change]:
        with self._lock:
            return list(self._rows)


class LoggedStore:
    """What every store served here shares: its site info, a ``ChangeLog`` of the changes made at
    run time (list=recentchanges) and a lag that tests raise to see maxlag answers. A store
    subclasses it and adds titles, page, parser_output and normalize."""

    def __init__(self, site: SiteInfo) -> None:
        self.site = site
        self.log = ChangeLog()
        self.lag_seconds = 0.0

    def site_info(self) -> SiteInfo:
        return self.site

    def changes(self) -> list[Change]:
        return self.log.rows()

    def lag(self) -> float:
        return self.lag_seconds

    def record_edit(self, title: str, ns: int, original_id: int, new: bool = False, redirect: bool = False) -> None:
        """An edit (or a new page) of title, whose page id is original_id unless a page moved there."""
        pageid = self.log.page_id(title, original_id)
        self.log.edited(title, ns, pageid, self.log.revision(title, pageid), new=new, redirect=redirect)
