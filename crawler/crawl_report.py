"""What a crawl, a resumed crawl or an update did: ``CrawlReport``, and its summary for people."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class CrawlReport:
    out_path: Path
    stored: int = 0                 # corpus pages written
    aliases: int = 0                # alias titles over all pages
    visited: int = 0                # URLs fetched in this run
    resumed: int = 0                # URLs replayed from an interrupted crawl's journal
    not_modified: int = 0           # 304 answers to conditional requests
    requests: int = 0               # HTTP requests sent (retries, redirects and robots.txt included)
    retries: int = 0
    bytes: int = 0                  # received: status lines, headers, bodies
    seconds: float = 0.0
    limit_reached: bool = False     # stopped at the page limit (crawl()'s max_pages)
    skipped: Counter = field(default_factory=Counter)  # reason -> URLs
    api: str | None = None          # the api.php the crawl listed the wiki with (None: links followed)
    changes: int | None = None      # an update: rows of recent changes read (None: a full crawl)
    removed: int = 0                # an update: pages gone (deleted, or now a redirect)
    site: str = ""                  # the wiki's name recorded on every page ("" when it said none)
    delay: float = 0.0              # seconds between request starts to the wiki's host (Crawl-delay included)
    local: bool = False             # the wiki is on this machine (a loopback host: no delay unless one is given)

    @property
    def requests_per_page(self) -> float:
        return self.requests / self.stored if self.stored else float(self.requests)

    @property
    def pages_per_second(self) -> float:
        return self.visited / self.seconds if self.seconds > 0 else 0.0

    def summary(self, limit_name: str = "the page limit") -> str:
        """Lines for people; ``limit_name``: what the page limit is called where the reader set it."""
        lines = [f"stored {self.stored} pages with {self.aliases} aliases in {self.out_path}"
                 + (f" (site: {self.site})" if self.site else " (no site name: the wiki states none)")
                 + (f" ({limit_name} reached)" if self.limit_reached else "")]
        if self.changes is not None:
            lines.append(f"update through {self.api}: {self.changes} recent changes, {self.visited} pages fetched, "
                         f"{self.removed} removed")
        elif self.api:
            lines.append(f"listed through the MediaWiki API at {self.api} "
                         f"({self.requests_per_page:.2f} requests per stored page)")
        visited = f"visited {self.visited} URLs in {self.seconds:.1f} s ({self.pages_per_second:.1f} pages/s)"
        if self.resumed:
            visited += f", {self.resumed} more replayed from the interrupted crawl"
        spacing = (f"{self.delay:g} s apart" if self.delay else "no delay") + (
            " (the wiki is on this machine)" if self.local else "")
        lines.append(f"{visited}; {self.requests} requests, {spacing}, {_size(self.bytes)} received, "
                     f"{self.not_modified} not modified, {self.retries} retries")
        if self.skipped:
            reasons = ", ".join(f"{n} {reason}" for reason, n in self.skipped.most_common())
            lines.append(f"skipped {sum(self.skipped.values())} URLs: {reasons}")
        else:
            lines.append("skipped nothing")
        return "\n".join(lines)


def _size(nbytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if nbytes < 1024 or unit == "GB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes} B"
