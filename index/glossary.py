"""Players' words for things the wiki calls otherwise: community slang, abbreviations and old names.

Redirects already carry many old names as aliases ("Workbench" -> Crafting table), but a crawl only
learns the redirects it meets, and players use words no redirect has ("notch apple", "boa", "skellies").
A question that uses one gets the wiki's name added ("what does a notch apple do (enchanted golden
apple)"), so both the lexical and the dense ranking see the name the pages use.

The words are data: ``index/data/glossary.tsv`` for the Minecraft Wiki, and a server's own file merged
over it (given to ``build_index``, stored in the index so that every search uses it).

    glossary = Glossary.bundled().merged(Glossary.load(path))
    glossary.expand("what does a notch apple do")   # "... (enchanted golden apple)"
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from jarvis.index.errors import SearchIndexError

BUNDLED_GLOSSARY = Path(__file__).resolve().parent / "data" / "glossary.tsv"
# Tables: a thing's name, a verb, and the prose's words for a verb (readers only: "love mode" is on
# every breedable mob's page and would pull general pages into retrieval).
NAME, ACTION, PROSE = "name", "action", "prose"
TABLES = (NAME, ACTION, PROSE)
RETRIEVAL_TABLES = (NAME, ACTION)


class GlossaryError(SearchIndexError):
    """A glossary file that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class Glossary:
    """players' words -> the wiki's words, per table (NAME, ACTION, PROSE); keys are case-folded."""

    tables: dict[str, dict[str, str]] = field(default_factory=lambda: {table: {} for table in TABLES})

    @classmethod
    def bundled(cls) -> "Glossary":
        """The Minecraft Wiki's glossary shipped with Jarvis."""
        return cls.load(BUNDLED_GLOSSARY)

    @classmethod
    def load(cls, path: str | Path) -> "Glossary":
        """A glossary file; a GlossaryError naming the line when one is malformed."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise GlossaryError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise GlossaryError(f"cannot read glossary {path}: {exc.strerror or exc}") from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, source: str = "glossary") -> "Glossary":
        """Lines of ``table<TAB>players' words<TAB>wiki's words`` (or ``players' words<TAB>wiki's words``,
        a name); ``#`` starts a comment line."""
        tables: dict[str, dict[str, str]] = {table: {} for table in TABLES}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cells = [cell.strip() for cell in line.split("\t")]
            if len(cells) == 2:
                cells = [NAME, *cells]
            if len(cells) != 3:
                raise GlossaryError(f"{source}, line {number}: expected 'table<TAB>players' words<TAB>wiki's words' "
                                    f"(or two columns for a name), got {len(cells)} column(s): {line.strip()[:60]!r}")
            table, words, wiki = cells
            if table not in tables:
                raise GlossaryError(f"{source}, line {number}: unknown table {table!r} (use {', '.join(TABLES)})")
            if not re.search(r"\w", words) or not re.search(r"\w", wiki):
                raise GlossaryError(f"{source}, line {number}: an empty phrase")
            tables[table][" ".join(words.casefold().split())] = " ".join(wiki.split())
        return cls(tables)

    def merged(self, other: "Glossary") -> "Glossary":
        """This glossary with ``other``'s entries added, ``other`` winning where both define a phrase."""
        return Glossary({table: {**self.tables.get(table, {}), **other.tables.get(table, {})} for table in TABLES})

    def __len__(self) -> int:
        return sum(len(entries) for entries in self.tables.values())

    def to_text(self) -> str:
        """The glossary in its file format (what the index stores)."""
        return "".join(f"{table}\t{words}\t{wiki}\n" for table in TABLES
                       for words, wiki in self.tables.get(table, {}).items())

    def expand(self, question: str, tables: tuple[str, ...] = RETRIEVAL_TABLES) -> str:
        """The question with the wiki's words for the players' words it uses added in brackets;
        ``tables`` picks which tables count."""
        added: list[str] = []
        folded = question.casefold()
        for table in tables:
            pattern = self._patterns.get(table)
            if pattern is None:
                continue
            for match in pattern.finditer(question):
                word = self.tables[table][" ".join(match.group(1).casefold().split())]
                if word not in added and word.casefold() not in folded:
                    added.append(word)
        return f"{question} ({', '.join(added)})" if added else question

    @cached_property
    def _patterns(self) -> dict[str, re.Pattern]:
        patterns = {}
        for table, entries in self.tables.items():
            if not entries:
                continue
            # Longest phrases first, so "zombie pigman" wins over "pigman"; a name counts in the plural too.
            phrases = sorted(entries, key=len, reverse=True)
            plural = r"(?:s|es)?" if table == NAME else ""
            body = "|".join(r"\s+".join(re.escape(word) for word in phrase.split()) for phrase in phrases)
            patterns[table] = re.compile(r"(?<![\w'])(" + body + r")" + plural + r"(?![\w'])", re.IGNORECASE)
        return patterns
