"""Page titles the MediaWiki way: namespaces, normalization and URLs."""
from __future__ import annotations

import re
from urllib.parse import quote

SITE_NAME = "Minecraft Wiki"
MAIN_PAGE = "Main Page"

# Namespace name -> number. The standard MediaWiki namespaces, the project namespace (named after
# the site) and custom namespaces for the spin-off games, which the Minecraft Wiki also keeps
# apart from its articles about Minecraft itself. Odd numbers are the talk namespaces.
NAMESPACES: dict[str, int] = {
    "Special": -1, "": 0, "Talk": 1, "User": 2, "User talk": 3,
    SITE_NAME: 4, f"{SITE_NAME} talk": 5, "File": 6, "File talk": 7,
    "Template": 10, "Template talk": 11, "Help": 12, "Help talk": 13,
    "Category": 14, "Category talk": 15,
    "Minecraft Dungeons": 10000, "Minecraft Dungeons talk": 10001,
    "Minecraft Earth": 10002, "Minecraft Earth talk": 10003,
    "Minecraft Story Mode": 10004, "Minecraft Story Mode talk": 10005,
    "Minecraft Legends": 10006, "Minecraft Legends talk": 10007,
}
SPINOFF_NAMESPACES = ("Minecraft Dungeons", "Minecraft Earth", "Minecraft Story Mode", "Minecraft Legends")
_BY_FOLDED_NAME = {name.casefold(): name for name in NAMESPACES if name}


def _ucfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def split_namespace(title: str) -> tuple[str, str]:
    """("Category", "Passive mobs") for "Category:Passive mobs"; ("", "Cow") for "Cow"."""
    prefix, colon, rest = title.partition(":")
    name = _BY_FOLDED_NAME.get(" ".join(prefix.replace("_", " ").split()).casefold())
    if colon and name is not None:
        return name, rest
    return "", title


def normalize_title(raw: str) -> str:
    """MediaWiki's normal form: underscores as spaces, single spaces, first letter upper case
    (after the namespace, too): "category:passive_mobs" -> "Category:Passive mobs"."""
    text = " ".join(raw.replace("_", " ").split())
    namespace, rest = split_namespace(text)
    rest = _ucfirst(rest.strip())
    return f"{namespace}:{rest}" if namespace else rest


def namespace_number(title: str) -> int:
    return NAMESPACES[split_namespace(title)[0]]


def talk_title(title: str) -> str | None:
    """The discussion page of a page ("Talk:Cow", "Template talk:Navbox mobs"), None for Special:."""
    namespace, rest = split_namespace(title)
    number = NAMESPACES[namespace]
    if number < 0 or number % 2 == 1:
        return None
    return f"Talk:{rest}" if number == 0 else f"{namespace} talk:{rest}"


def dbkey(title: str) -> str:
    """The title as it appears in URLs and wgPageName: spaces as underscores."""
    return title.replace(" ", "_")


def url_path(title: str) -> str:
    """/w/Title, percent-encoded like MediaWiki's wfUrlencode (keeps : / ( ) , and friends)."""
    return "/w/" + quote(dbkey(title), safe=";@$!*(),/~:")


def index_php(title: str, **params: str) -> str:
    """/index.php?title=...&action=... (edit links, red links, permanent links)."""
    query = "&".join([f"title={quote(dbkey(title), safe=';@$!*(),/~:')}"] + [f"{k}={quote(v)}" for k, v in params.items()])
    return f"/index.php?{query}"


def css_class(text: str) -> str:
    """MediaWiki's escapeClass: page-Jack_o_Lantern style body classes."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", dbkey(text))
