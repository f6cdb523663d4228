"""Teaching: an answer the admin writes (or picks from a page) becomes a page of the server's guide, and a new
index generation is built from the index's own sources in the background.

A taught answer is a Markdown file under ``<guide>/taught/`` (crawler/guide.py reads it like any guide page):

    ---
    question: how do i claim land
    answer: Claim land with a golden shovel ...
    who: admin
    when: '2026-11-27T19:40:02Z'
    aliases: [how do i claim land]
    ---
    # How do I claim land

    ## how do i claim land

    Claim land with a golden shovel ...

The index is rebuilt from the sources its live generation records (its wikis' corpora and the guide, with
the same profile and players' words), the guide folder added when it had none; the build is incremental
(one page added) and atomic (index/layout.py), so `jarvis ask`, a running `serve` and the workers use the
new generation at their next question, without a restart.
"""
from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from jarvis.errors import JarvisError

log = logging.getLogger(__name__)

TAUGHT_FOLDER = "taught"            # under the guide folder
MAX_QUESTION = 300
MAX_ANSWER = 2000
MAX_TITLE = 120
_SLUG = re.compile(r"[^a-z0-9]+")
# CommonMark's backslash escapes: what must not be read as Markdown or raw HTML in a player's or admin's text.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~!&])")
_LEADING = re.compile(r"^(\s*)([-+=>]|\d+[.)])")


class TeachError(JarvisError):
    """A taught answer that cannot be stored (empty, too long, not found)."""


@dataclass(frozen=True)
class TaughtAnswer:
    id: str                 # the file's name without .md
    question: str
    answer: str
    title: str
    who: str
    when: str
    path: Path

    def to_json(self) -> dict:
        return {"id": self.id, "question": self.question, "answer": self.answer, "title": self.title,
                "who": self.who, "when": self.when, "file": self.path.name}


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


def title_for(question: str) -> str:
    """A page title from a question: "how do i claim land?" -> "How do I claim land"."""
    words = question.rstrip("?!. ").split()
    words = ["I" if w == "i" else w for w in words]
    title = " ".join(words)
    return (title[:1].upper() + title[1:])[:MAX_TITLE] or "Taught answer"


class GuideShelf:
    """The taught answers in a guide folder: list, read, write, remove."""

    def __init__(self, guide: Path) -> None:
        self.guide = Path(guide)
        self.folder = self.guide / TAUGHT_FOLDER

    def all(self) -> list[TaughtAnswer]:
        if not self.folder.is_dir():
            return []
        answers = []
        for path in sorted(self.folder.glob("*.md")):
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
        title = _clean(title, "title", MAX_TITLE) if title and title.strip() else title_for(question)
        who = " ".join(str(who).split())[:60] or "admin"
        if answer_id is not None:
            self.get(answer_id)
        else:
            answer_id = f"{(_SLUG.sub('-', question.casefold()).strip('-') or 'answer')[:50]}-{uuid.uuid4().hex[:6]}"
        self._check_title(title, answer_id)
        when = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        front = {"question": question, "answer": answer, "title": title, "who": who, "when": when,
                 "aliases": [title_for(question)] if title_for(question) != title else []}
        text = ("---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=1000) + "---\n"
                f"# {markdown_text(title)}\n\n## {markdown_text(question)}\n\n{markdown_text(answer)}\n")
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(answer_id)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")   # hidden: never read as a page
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return self._read(path)

    def remove(self, answer_id: str) -> TaughtAnswer:
        taught = self.get(answer_id)
        taught.path.unlink()
        return taught

    def has_pages(self) -> bool:
        from jarvis.crawler.guide import guide_files

        return self.guide.is_dir() and bool(guide_files(self.guide))

    # ------------------------------------------------------------------ internals

    def _path(self, answer_id: str) -> Path:
        if not re.fullmatch(r"[a-z0-9-]{1,64}", answer_id or ""):
            raise TeachError(f"no taught answer {answer_id!r}")
        return self.folder / f"{answer_id}.md"

    def _check_title(self, title: str, answer_id: str) -> None:
        from jarvis.crawler.guide import GuideError, read_guide_page, guide_files

        if not self.guide.is_dir():
            return
        for path in guide_files(self.guide):
            if path == self._path(answer_id):
                continue
            try:
                other = read_guide_page(path, path.relative_to(self.guide).as_posix())
            except GuideError:
                continue
            if other.title.casefold() == title.casefold():
                raise TeachError(f"the guide already has a page titled {title!r} "
                                 f"({path.relative_to(self.guide).as_posix()}): give this answer another title")

    def _read(self, path: Path) -> TaughtAnswer:
        from jarvis.crawler.guide import GuideError, _front_matter

        try:
            front, _ = _front_matter(path.read_text(encoding="utf-8"), path)
        except (OSError, UnicodeDecodeError, GuideError) as exc:
            raise TeachError(f"{path}: unreadable taught answer ({exc})") from None
        return TaughtAnswer(id=path.stem, question=str(front.get("question", "")), answer=str(front.get("answer", "")),
                            title=str(front.get("title", "")), who=str(front.get("who", "")),
                            when=str(front.get("when", "")), path=path)


@dataclass
class BuildStatus:
    state: str = "idle"             # idle | building | failed
    generation: str = ""            # the live generation after the last build
    started: float = 0.0            # time.time() of the last build's start
    seconds: float | None = None    # how long the last finished build took
    error: str = ""
    builds: int = 0                 # finished builds since the panel started
    requested: int = 0              # builds asked for since the panel started

    def to_json(self) -> dict:
        return {"state": self.state, "generation": self.generation, "seconds": self.seconds, "error": self.error,
                "builds": self.builds}


class IndexRebuilder:
    """Builds new generations of one index from its recorded sources plus the guide folder, one at a time,
    in a background thread; requests that come while a build runs are served by one more build after it."""

    def __init__(self, index_dir: Path, guide: Path, encoder_cache: str = "") -> None:
        self.index_dir = Path(index_dir)
        self.guide = Path(guide)
        self.encoder_cache = encoder_cache
        self.status = BuildStatus()
        self._cond = threading.Condition()
        self._pending = False
        self._thread: threading.Thread | None = None
        self._encoder = None
        self._encoder_lock = threading.Lock()
        self._stopping = False
        live = self._live()
        self.status.generation = live.name if live is not None else ""

    def _live(self):
        from jarvis.index.layout import IndexDir

        return IndexDir(self.index_dir).live_or_none()

    def sources(self):
        """What the next generation is built from: the live one's sources, the guide folder in place of the
        guide it records (or added), or left out when it holds no page."""
        from jarvis.crawler.guide import guide_files
        from jarvis.index import CorpusSource, GuideSource, recorded_sources

        live = self._live()
        if live is None:
            raise TeachError(f"{self.index_dir}: no index to add the guide to (build it first: jarvis index)")
        recorded = recorded_sources(live.meta.sources)
        if not recorded:
            raise TeachError(f"{self.index_dir}: the index does not record what it was built from; rebuild it once "
                             "with jarvis index")
        docs_url = next((s.docs_url for s in recorded if isinstance(s, GuideSource)), "")
        sources = [s for s in recorded if isinstance(s, CorpusSource)]
        if self.guide.is_dir() and guide_files(self.guide):
            sources.append(GuideSource(self.guide, docs_url))
        if not sources:
            raise TeachError("the index would hold no page: it was built from the guide alone, now empty")
        return sources, live.meta.profile

    def request(self) -> int:
        """Ask for a build; returns the request's number (``wait`` takes it)."""
        with self._cond:
            self._pending = True
            self.status.requested += 1
            number = self.status.requested
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="panel-index-build", daemon=True)
                self._thread.start()
            self._cond.notify_all()
            return number

    def wait(self, number: int, timeout: float) -> bool:
        """Wait until a build that started after request ``number`` has finished (True), or timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._done_through < number:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    _done_through = 0   # the highest request number a finished build covers

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending or self._stopping:
                    return
                self._pending = False
                covers = self.status.requested
                self.status.state, self.status.started, self.status.error = "building", time.time(), ""
            started = time.perf_counter()
            try:
                self._build()
                error = ""
            except Exception as exc:  # noqa: BLE001 - a failed build is reported on the page, the panel goes on
                log.warning("index build failed: %s", exc)
                error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            with self._cond:
                self.status.seconds = round(time.perf_counter() - started, 2)
                self.status.builds += 1
                self.status.error = error
                self.status.state = "failed" if error else "idle"
                live = self._live()
                self.status.generation = live.name if live is not None else ""
                self._done_through = covers
                self._cond.notify_all()

    def warm_up(self) -> None:
        """Load the page encoder now (in a background thread), not at the first taught answer: a dense index's
        build embeds the new page with it, and loading it is most of a first build's time."""
        def load() -> None:
            try:
                self._load_encoder()
            except Exception as exc:  # noqa: BLE001 - the first build loads it again, and says why if it fails
                log.warning("page encoder not loaded ahead: %s", exc)

        threading.Thread(target=load, name="panel-encoder", daemon=True).start()

    def _load_encoder(self):
        from jarvis.index import get_profile

        live = self._live()
        with self._encoder_lock:
            if self._encoder is None and live is not None and get_profile(live.meta.profile).dense:
                from jarvis.index.dense import DenseEncoder

                self._encoder = DenseEncoder.load(self.encoder_cache or None)
            return self._encoder

    def _build(self) -> None:
        from jarvis.index import build_index, get_profile

        sources, profile = self.sources()
        encoder = self._load_encoder() if get_profile(profile).dense else None
        stats = build_index(sources, self.index_dir, profile=profile, progress=False, encoder=encoder)
        log.info("%s", stats.summary())

    def close(self) -> None:
        with self._cond:
            self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout=60)


@dataclass
class Teacher:
    """What the panel's Teach page and POST /api/answers call: store, edit, remove, and rebuild."""

    shelf: GuideShelf
    rebuilder: IndexRebuilder
    build_timeout: float = 300.0
    saved_at: dict = field(default_factory=dict)     # id -> time.time() of its last save (the save->answer figure)

    def teach(self, question: str, answer: str, title: str = "", who: str = "admin", *, wait: bool = False,
              answer_id: str | None = None) -> tuple[TaughtAnswer, bool]:
        taught = self.shelf.save(question, answer, title=title, who=who, answer_id=answer_id)
        self.saved_at[taught.id] = time.time()
        return taught, self._rebuild(wait)

    def remove(self, answer_id: str, *, wait: bool = False) -> tuple[TaughtAnswer, bool]:
        taught = self.shelf.remove(answer_id)
        return taught, self._rebuild(wait)

    def _rebuild(self, wait: bool) -> bool:
        number = self.rebuilder.request()
        if not wait:
            return False
        if not self.rebuilder.wait(number, self.build_timeout):
            return False
        return self.rebuilder.status.state != "failed"
