"""URLs of a MediaWiki site: normal form, the crawl's scope, and page titles from article URLs."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

# Characters MediaWiki's wfUrlencode leaves unescaped in article URLs: normalized URLs are
# spelled the way the wiki links them (/w/Jack_o%27Lantern, also for /w/Jack_o'Lantern).
_PATH_SAFE = ";@$!*(),/~:"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str, base: str | None = None) -> str:
    """One spelling per page: absolute, lower-case scheme and host, no default port, no fragment,
    canonical percent-encoding, spaces as underscores (MediaWiki treats them alike)."""
    if base is not None:
        url = urljoin(base, url)
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a port that is not a number
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = quote(unquote(parts.path).replace(" ", "_"), safe=_PATH_SAFE) or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def article_url(origin: str, articlepath: str, title: str) -> str:
    """The normalized URL of a wiki page: origin + wgArticlePath ("/w/$1") with the title in it."""
    return normalize_url(origin + articlepath.replace("$1", quote(title.replace(" ", "_"), safe=_PATH_SAFE)))


def is_loopback(netloc: str) -> bool:
    """Whether a URL's host ("127.0.0.1:8080", "localhost", "[::1]:80") is this machine: 127.0.0.0/8, ::1
    (IPv4-mapped too), ``localhost`` and names under ``.localhost`` (RFC 6761). Names are not resolved."""
    host = (urlsplit(f"//{netloc}").hostname or "").rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def split_namespace(title: str) -> tuple[str, str]:
    """("Minecraft Dungeons", "Cow") for "Minecraft_Dungeons:Cow"; ("", title) without a prefix."""
    prefix, sep, rest = title.partition(":")
    if not sep:
        return "", title
    return " ".join(prefix.replace("_", " ").split()), rest


def has_prefix(title: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the title's namespace prefix (before the first ':') is one of prefixes (any case)."""
    prefix, _ = split_namespace(title)
    return bool(prefix) and prefix.casefold() in {p.casefold() for p in prefixes}


@dataclass(frozen=True)
class Scope:
    """The part of the web a crawl may visit: one scheme and host, and its article path (e.g. /w/)."""

    origin: str          # "https://minecraft.wiki"
    article_path: str    # "/w/"

    @classmethod
    def from_url(cls, url: str, article_path: str | None = None) -> "Scope":
        """The scope of a start URL. Without a known article path (MediaWiki's wgArticlePath),
        it is the URL's first path segment: /w/ for /w/Cow."""
        url = normalize_url(url)
        if article_path is None:
            first, slash, rest = urlsplit(url).path.lstrip("/").partition("/")
            article_path = f"/{first}/" if slash else "/"
        if not article_path.startswith("/"):
            article_path = "/" + article_path
        return cls(origin=origin_of(url), article_path=article_path)

    def title_of(self, url: str) -> str | None:
        """The page title an in-scope URL names ("Crafting table" for /w/Crafting_table), else None.
        URLs with a query string (?action=edit, ?redirect=no) are out of scope."""
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin or parts.query:
            return None
        if not parts.path.startswith(self.article_path):
            return None
        title = unquote(parts.path[len(self.article_path):]).replace("_", " ").strip()
        if not title or title.endswith(".php"):  # the article path itself, or a script (/w/index.php)
            return None
        return title

    def contains(self, url: str) -> bool:
        return self.title_of(url) is not None
