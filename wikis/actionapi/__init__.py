"""The server side of the MediaWiki Action API subset that Jarvis's crawler uses, over any page store.

``ActionApi(store).respond(params)`` answers ``api.php`` requests as MediaWiki 1.43 does with
``format=json&formatversion=2``. A wiki plugs in by implementing ``PageStore`` (store.py):
the sample wiki (wikis/samplewiki) and the real-wiki test bed (wikis/realbed) do, on
``LoggedStore``; ``ChangeLog`` (changes.py) keeps the recent changes of
a store whose pages change at run time. See docs/crawler-api.md.
"""
from jarvis_lab.actionapi.api import ActionApi, ApiAnswer
from jarvis_lab.actionapi.changes import ChangeLog, LoggedStore
from jarvis_lab.actionapi.store import Change, PageStore, SiteInfo, StoredPage, api_timestamp

__all__ = ["ActionApi", "ApiAnswer", "Change", "ChangeLog", "LoggedStore", "PageStore", "SiteInfo", "StoredPage", "api_timestamp"]
