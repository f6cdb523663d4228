"""The real-wiki test bed: real Minecraft Wiki pages (``../shared/realwiki/pages.json.gz``, CC BY-NC-SA,
never copied into the project) served as minecraft.wiki serves them, for crawling and evaluation.

- ``RealBed.load()``: the pages, titles and redirects (``bed.py``);
- ``serve_realbed_wiki`` / ``start_realbed_wiki``: the site over HTTP (``jarvis realbed-wiki``; ``site.py``);
- ``RealBedStore``: the bed as a jarvis_lab.actionapi page store, behind the site's ``/api.php`` (``store.py``).
"""
from jarvis_lab.realbed.bed import RealBed, RealBedError, RealBedMissing
from jarvis_lab.realbed.store import RealBedStore
from jarvis_lab.realbed.site import RealBedServer, RealBedSite, serve_realbed_wiki, start_realbed_wiki

__all__ = ["RealBed", "RealBedError", "RealBedMissing", "RealBedServer", "RealBedSite", "RealBedStore", "serve_realbed_wiki",
           "start_realbed_wiki"]
