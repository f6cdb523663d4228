"""Teaching: an answer the admin writes (or picks from a page) becomes a taught answer, which `jarvis ask`, a
running `serve` and the workers say for its question (and its close variants) from their next question on
(jarvis/taught.py), without a restart or an index build.

A taught answer is a Markdown file under ``<guide>/taught/``, its facts in the front matter (the body keeps it
readable as a page; no index reads it: crawler/guide.py leaves ``taught/`` out of the guide):

    ---
    question: how do i claim land
    answer: Claim land with a golden shovel ...
    title: Claim land with a golden shovel
    who: admin
    when: '2026-11-27T19:40:02Z'
    ---
    # Claim land with a golden shovel

    ## how do i claim land

    Claim land with a golden shovel ...

Its title is the admin's, else one made from the answer (never the question: players read it in the reply,
and the question is often the player's own typo), and no other guide page's or taught answer's. A removed
answer is kept aside (``<guide>/taught/.removed/``, a hidden folder nothing reads as an answer) until it is
restored or ``KEEP_REMOVED`` newer ones have been removed.
"""
from __future__ import annotations

import logging
import os
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml

from jarvis.errors import JarvisError
from jarvis.taught import TAUGHT_FOLDER, TaughtAnswer, TaughtFileError, read_taught, taught_files, title_from_answer

log = logging.getLogger(__name__)

REMOVED_FOLDER = ".removed"         # under the taught folder: removed answers, kept to be restored
KEEP_REMOVED = 50                   # removed answers kept aside, the newest
MAX_QUESTION = 300
MAX_ANSWER = 2000
MAX_TITLE = 120
_SLUG = re.compile(r"[^a-z0-9]+")
# CommonMark's backslash escapes: what must not be read as Markdown or raw HTML in a player's or admin's text.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~!&])")
_LEADING = re.compile(r"^(\s*)([-+=>]|\d+[.)])")


class TeachError(JarvisError):
    """A taught answer that cannot be stored (empty, too long, not found)."""


def _clean(text: object, what: str, limit: int) -> str:
    if not isinstance(text, str):
        raise TeachError(f"{what}: expected text")
    text = " ".join(text.replace("\x00", " ").split())
    if not text:
        raise TeachError(f"{what}: empty")
    if len(text) > limit:
        raise TeachError(f"{what}: longer than {limit} characters")
    return text


def markdown_text(text: str) -> str:
    """``text`` as one Markdown paragraph that reads back as exactly ``text`` (crawler.guide.markdown_paragraphs)."""
    return _LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), _MARKDOWN.sub(r"\\\1", text))


class GuideShelf:
    """The taught answers in a guide folder: list, read, write, remove, restore."""

    def __init__(self, guide: Path) -> None:
        self.guide = Path(guide)
        self.folder = self.guide / TAUGHT_FOLDER
        self.removed = self.folder / REMOVED_FOLDER

    def all(self) -> list[TaughtAnswer]:
        answers = []
        for path in taught_files(self.guide):
            try:
                answers.append(self._read(path))
            except TeachError as exc:
                log.warning("%s", exc)
        return sorted(answers, key=lambda a: a.when, reverse=True)

    def get(self, answer_id: str) -> TaughtAnswer:
        path = self._path(answer_id)
        if not path.is_file():
            raise TeachError(f"no taught answer {answer_id!r}")
        return self._read(path)

    def save(self, question: str, answer: str, *, title: str = "", who: str = "admin",
             answer_id: str | None = None) -> TaughtAnswer:
        """Write (or, with ``answer_id``, rewrite) a taught answer's page; its title must not be another page's."""
        question = _clean(question, "question", MAX_QUESTION)
        answer = _clean(answer, "answer", MAX_ANSWER)
        chosen = bool(title and isinstance(title, str) and title.strip())
        title = _clean(title, "title", MAX_TITLE) if chosen else title_from_answer(answer)
        who = " ".join(str(who).split())[:60] or "admin"
        if answer_id is not None:
            self.get(answer_id)
        else:
            answer_id = f"{(_SLUG.sub('-', question.casefold()).strip('-') or 'answer')[:50]}-{uuid.uuid4().hex[:6]}"
        title = self._free_title(title, answer_id) if not chosen else title
        self._check_title(title, answer_id)
        when = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        front = {"question": question, "answer": answer, "title": title, "who": who, "when": when}
        text = ("---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=1000) + "---\n"
                f"# {markdown_text(title)}\n\n## {markdown_text(question)}\n\n{markdown_text(answer)}\n")
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(answer_id)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")   # hidden: never read as a page
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return self._read(path)

    def remove(self, answer_id: str) -> TaughtAnswer:
        """Take a taught answer off the shelf, kept aside to be restored (``restore``)."""
        taught = self.get(answer_id)
        self.removed.mkdir(parents=True, exist_ok=True)
        os.replace(taught.path, self.removed / taught.path.name)
        kept = sorted(self.removed.glob("*.md"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in kept[KEEP_REMOVED:]:
            old.unlink(missing_ok=True)
        return taught

    def removed_answer(self, answer_id: str) -> TaughtAnswer:
        """A removed answer kept aside (TeachError when it is not)."""
        self._path(answer_id)     # a valid id
        kept = self.removed / f"{answer_id}.md"
        if not kept.is_file():
            raise TeachError(f"no removed answer {answer_id!r}")
        return self._read(kept)

    def restore(self, answer_id: str) -> TaughtAnswer:
        """Put a removed answer back (the undo of ``remove``); a user error when it is not kept or its place
        was taken since."""
        self._path(answer_id)     # a valid id
        kept = self.removed / f"{answer_id}.md"
        if not kept.is_file():
            raise TeachError(f"no removed answer {answer_id!r} to restore")
        if self._path(answer_id).exists():
            raise TeachError(f"the taught answer {answer_id!r} is already there")
        taught = self._read(kept)
        self._check_title(taught.title, answer_id)
        os.replace(kept, self._path(answer_id))
        return self._read(self._path(answer_id))

    # ------------------------------------------------------------------ internals

    def _path(self, answer_id: str) -> Path:
        if not re.fullmatch(r"[a-z0-9-]{1,64}", answer_id or ""):
            raise TeachError(f"no taught answer {answer_id!r}")
        return self.folder / f"{answer_id}.md"

    def _free_title(self, title: str, answer_id: str) -> str:
        """A made title, numbered when another page or answer has it already ("Claim land (2)")."""
        for number in range(1, 100):
            candidate = title if number == 1 else f"{title} ({number})"
            try:
                self._check_title(candidate, answer_id)
                return candidate
            except TeachError:
                continue
        return f"{title} ({uuid.uuid4().hex[:4]})"

    def _check_title(self, title: str, answer_id: str) -> None:
        """A reply names the page: no two pages of the guide, taught answers included, may share a title."""
        from jarvis.crawler.guide import GuideError, guide_files, read_guide_page

        if not self.guide.is_dir():
            return
        for path in taught_files(self.guide):
            if path != self._path(answer_id):
                try:
                    other = self._read(path).title
                except TeachError:
                    continue
                if other.casefold() == title.casefold():
                    raise TeachError(f"another taught answer is titled {title!r} ({path.name}): give this answer "
                                     "another title")
        for path in guide_files(self.guide):
            try:
                other = read_guide_page(path, path.relative_to(self.guide).as_posix())
            except GuideError:
                continue
            if other.title.casefold() == title.casefold():
                raise TeachError(f"the guide already has a page titled {title!r} "
                                 f"({path.relative_to(self.guide).as_posix()}): give this answer another title")

    def _read(self, path: Path) -> TaughtAnswer:
        try:
            return read_taught(path)
        except TaughtFileError as exc:
            raise TeachError(str(exc)) from None


@dataclass
class Teacher:
    """What the panel's Teach page and its JSON API call: store, edit, remove and restore taught answers."""

    shelf: GuideShelf

    def teach(self, question: str, answer: str, title: str = "", who: str = "admin", *,
              answer_id: str | None = None) -> TaughtAnswer:
        return self.shelf.save(question, answer, title=title, who=who, answer_id=answer_id)

    def remove(self, answer_id: str) -> TaughtAnswer:
        return self.shelf.remove(answer_id)

    def removed_answer(self, answer_id: str) -> TaughtAnswer:
        """A removed answer kept aside (TeachError when it is not)."""
        self._path(answer_id)     # a valid id
        kept = self.removed / f"{answer_id}.md"
        if not kept.is_file():
            raise TeachError(f"no removed answer {answer_id!r}")
        return self._read(kept)

    def restore(self, answer_id: str) -> TaughtAnswer:
        return self.shelf.restore(answer_id)
