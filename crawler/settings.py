"""Crawl settings: politeness and robustness as configuration (in the spirit of Scrapy's settings)."""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_USER_AGENT = "JarvisBot/0.1 (+https://github.com/jarvis-minecraft/jarvis; Minecraft QA bot crawler)"

# Title prefixes of MediaWiki namespaces that hold no articles. Used to drop links before fetching
# them, and to classify a page whose HTML has no "wgNamespaceNumber" (where it has one, only
# namespace 0 counts as an article). Compared case-insensitively, "_" and " " alike.
NON_ARTICLE_NAMESPACES = (
    "Media", "Special", "Talk", "User", "User talk", "Project", "Project talk", "File", "File talk",
    "Image", "Image talk", "MediaWiki", "MediaWiki talk", "Template", "Template talk", "Help", "Help talk",
    "Category", "Category talk", "Module", "Module talk", "Minecraft Wiki", "Minecraft Wiki talk",
    "Gadget", "Gadget talk", "Gadget definition", "Gadget definition talk", "TimedText", "TimedText talk",
    "Widget", "Widget talk", "Property", "Form", "Topic", "Data", "Tutorial", "Tutorial talk",
    "UserWiki", "UserProfile", "Blog", "Message Wall", "Thread", "Board", "Map", "Portal",
)

# Spin-off games: their namespaces ("Minecraft Dungeons:Cow", "MCD:Cow") and articles about them
# (title, category or the lead sentence naming one) are not about Minecraft itself.
SPIN_OFF_GAMES = (
    "Minecraft Dungeons", "Minecraft Legends", "Minecraft Earth", "Minecraft: Story Mode",
    "Minecraft Story Mode", "Minecraft Education", "Minecraft: Education Edition",
    "Minecraft Education Edition", "MinecraftEdu", "Minecraft Blast", "A Minecraft Movie",
    "Minecraft Movie", "Minecraft Spin-off",
)
SPIN_OFF_NAMESPACES = (
    "Minecraft Dungeons", "Dungeons", "MCD", "Minecraft Legends", "Legends", "MCL", "Minecraft Earth",
    "Earth", "MCE", "Minecraft Story Mode", "Story Mode", "MCSM", "Minecraft Education", "Education",
    "Movie", "Spin-off",
)


@dataclass(frozen=True)
class CrawlSettings:
    user_agent: str = DEFAULT_USER_AGENT
    delay: float = 1.0                 # seconds between requests to the same host
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
