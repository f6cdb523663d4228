"""Crawl settings: politeness and robustness as configuration (in the spirit of Scrapy's settings)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

DEFAULT_USER_AGENT = "JarvisBot/0.1 (+https://github.com/jarvis-minecraft/jarvis; Minecraft QA bot crawler)"
TABLE_MODES = ("drop", "sentences", "text")   # how content tables become paragraphs (crawler/tables.py)
POLITE_DELAY = 1.0     # seconds between requests to a host on another machine, unless a delay is given

# The wiki's namespaces and spin-off games, as data (data/page_kinds.yaml says what each list is).
PAGE_KINDS_FILE = Path(__file__).resolve().parent / "data" / "page_kinds.yaml"
_PAGE_KINDS = yaml.safe_load(PAGE_KINDS_FILE.read_text(encoding="utf-8"))
NON_ARTICLE_NAMESPACES: tuple[str, ...] = tuple(_PAGE_KINDS["non_article_namespaces"])   # no articles there
SPIN_OFF_GAMES: tuple[str, ...] = tuple(_PAGE_KINDS["spin_off_games"])                   # not Minecraft itself
SPIN_OFF_NAMESPACES: tuple[str, ...] = tuple(_PAGE_KINDS["spin_off_namespaces"])
JOKE_TERMS: tuple[str, ...] = tuple(_PAGE_KINDS["joke_terms"])     # joke releases and their worlds (April Fools)


@dataclass(frozen=True)
class CrawlSettings:
    user_agent: str = DEFAULT_USER_AGENT
    # Seconds between requests to the same host. None: none to a wiki on this machine (loopback: localhost,
    # 127.0.0.0/8, ::1), POLITE_DELAY to any other host, raised there by robots.txt's Crawl-delay; a delay
    # given applies to every host and is raised by Crawl-delay everywhere (throttle.py).
    delay: float | None = None
    workers: int = 4                   # small pool of fetch threads
    connect_timeout: float = 5.0       # seconds
    read_timeout: float = 15.0         # seconds without a byte from the server
    page_deadline: float = 60.0        # seconds for a whole response (stops slow trickles)
    retries: int = 3                   # extra attempts on 429/5xx/timeouts/connection errors (and API maxlag)
    backoff: float = 0.5               # urllib3 Retry backoff_factor: retry n waits backoff * 2**(n-1) s (first: at once)
    max_retry_after: float = 60.0      # cap on a server's Retry-After
    max_page_bytes: int = 5_000_000    # pages larger than this are skipped (reading stops there)
    max_redirects: int = 10
    obey_robots: bool = True
    use_api: bool = True               # crawl through the MediaWiki Action API where the site has one
    maxlag: int = 5                    # API requests ask the wiki to refuse them when its databases lag more
    changes_max_age_days: int = 90     # MediaWiki keeps recent changes this long ($wgRCMaxAge): older -> full crawl
    conditional: bool = True           # recrawl with If-None-Match / If-Modified-Since
    checkpoint_every: int = 20         # journal records between fsyncs
    tables: str = "text"               # content tables: "text" (measured best on the real bed), "sentences", "drop"
    non_article_namespaces: tuple[str, ...] = NON_ARTICLE_NAMESPACES
    spin_off_games: tuple[str, ...] = SPIN_OFF_GAMES
    spin_off_namespaces: tuple[str, ...] = SPIN_OFF_NAMESPACES
