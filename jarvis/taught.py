"""Taught answers: the admin's word, answered before the reader runs.

An answer the admin teaches at the desk (jarvis/panel/teach.py) is a Markdown file under the guide folder's
``taught/``, its question and answer in the front matter::

    ---
    question: how do i mak a furnace
    answer: Put 8 cobblestone in a ring in a crafting table.
    title: Put 8 cobblestone in a ring
    who: admin (panel)
    when: '2026-11-30T10:02:11Z'
    ---

A question that matches a taught one gets the taught answer, stated (confidence 1.0, the site "server guide",
the page the admin's title), and the reader never runs. It matches when, as one index reads both:

1. the words are the same (case, spacing and punctuation aside: ``question_key``);
2. the words are the same once spelt as the index searches them (``IndexView.spelt``: chat spellings, typos);
3. they are a close paraphrase: their content words (stemmed as the index stems them; question words such as
   "what" and "where", and the opening "is"/"can"/"do" of a yes-or-no question, counting half; chat filler not
   at all) overlap by at least ``PARAPHRASE_THRESHOLD``
   (weighted Jaccard), a word the index does not know counting as the known word one edit away ("mak" for
   "make"). The threshold was chosen on questions written for it, with a held-back part reported apart
   (eval/dev/taught_paraphrases.txt, bench/taught_threshold.py, docs/panel.md).

The taught answers are read from the guide folder (``guide_folder``: ``[panel] guide``, else the guide the
index was built with, else ``$JARVIS_HOME/guide``) again whenever a file of its ``taught/`` changes: `jarvis
ask`, a running `serve` and the workers use a new one at their next question, without a restart or an index
build (``TaughtAnswers.consult``). They are no pages of the index (crawler/guide.py leaves ``taught/`` out)
and the reader never reads one: teaching changes no other question's answer, not even its confidence.
"""
from __future__ import annotations

import os
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from jarvis.crawler.guide import (GUIDE_SITE, MARKDOWN_SUFFIXES, TAUGHT_FOLDER, GuideError, _front_matter,
                                  guide_page_url)
from jarvis.lexical import TermAnalyzer

if TYPE_CHECKING:
    from jarvis.config import Config
    from jarvis.pipeline import Answer, IndexView

TAUGHT_READER = "taught"        # Answer.reader of a taught answer: no reader ran
# The lowest weighted overlap of content words at which two questions are one (the module docstring). Chosen on
# the "chosen" part of eval/dev/taught_paraphrases.txt by a rule fixed beforehand: the lowest threshold at which
# no question written as a different question matches (bench/taught_threshold.py; figures in docs/panel.md).
PARAPHRASE_THRESHOLD = 0.75
WH_WEIGHT = 0.5                 # what, where, how many...: they say what is asked, less than the subject does
# Words that shape a question and say nothing of what is asked: left out of a paraphrase's comparison. Jarvis's
# own name and the game's, greetings and chat filler; the question words are lexical.QUESTION_WORDS.
FILLER = frozenset("""
    jarvis minecraft mc please pls plz plox hey hi hello yo guys guy bro anyone someone somebody
    know tell exactly actually even also just really here quick question help thanks thank thx ty u ya
""".split())
# ... and phrases: "on this server" says where every question is asked ("the server ip" keeps its word).
FILLER_PHRASES = re.compile(r"\b(?:on|in|at|for|of) (?:this|the|our|your|ur|ya) (?:server|game|world)\b")
WH_WORDS = frozenset("what which who whom whose where when why how".split())
# Words that change what is asked as much as its subject does: "how MUCH land can i claim", "... WITHOUT a pickaxe".
WEIGHTY = frozenset("many much not no never without nothing none".split())
# A question that opens with one of these asks yes or no ("is pvp allowed"): it is marked so, as a question
# word would mark it, and "where is pvp allowed" is not the same question.
YES_NO_OPENERS = frozenset("is are am was were can could do does did will would should shall may might has have had".split())
YES_NO = "?yes-no"
_APOSTROPHES = re.compile(r"['\u2019`]")
_NON_WORD = re.compile(r"[^\w]+")


@dataclass(frozen=True)
class TaughtAnswer:
    """One taught answer, as its file says it."""

    id: str                 # the file's name without .md
    question: str
    answer: str
    title: str
    who: str
    when: str
    path: Path
    url: str = ""           # its page's address, when the guide has one (docs_url)

    def to_json(self) -> dict:
        return {"id": self.id, "question": self.question, "answer": self.answer, "title": self.title,
                "who": self.who, "when": self.when, "file": self.path.name}


class TaughtFileError(GuideError):
    """A taught answer's file that cannot be read."""


def read_taught(path: Path, docs_url: str = "") -> TaughtAnswer:
    """One taught answer's file (TaughtFileError when it cannot be read)."""
    try:
        front, _ = _front_matter(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, GuideError) as exc:
        raise TaughtFileError(f"{path}: unreadable taught answer ({exc})") from None
    name = f"{TAUGHT_FOLDER}/{path.name}"
    return TaughtAnswer(id=path.stem, question=str(front.get("question", "")), answer=str(front.get("answer", "")),
                        title=str(front.get("title", "")), who=str(front.get("who", "")),
                        when=str(front.get("when", "")), path=path,
                        url=str(front.get("url") or guide_page_url(docs_url, name)))


def taught_files(guide: Path) -> list[Path]:
    """The taught answers' files of a guide folder, in name order ([] when it has none)."""
    folder = Path(guide) / TAUGHT_FOLDER
    try:
        return sorted(p for p in folder.iterdir()
                      if p.suffix.lower() in MARKDOWN_SUFFIXES and not p.name.startswith(".") and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def read_all(guide: Path, docs_url: str = "", errors: list[str] | None = None) -> list[TaughtAnswer]:
    """Every readable taught answer of a guide folder with a question and an answer, newest first; the files
    that cannot be read are left out (their messages added to ``errors``)."""
    answers = []
    for path in taught_files(guide):
        try:
            taught = read_taught(path, docs_url)
        except TaughtFileError as exc:
            if errors is not None:
                errors.append(str(exc))
            continue
        if taught.question.strip() and taught.answer.strip():
            answers.append(taught)
    return sorted(answers, key=lambda a: a.when, reverse=True)


def title_from_answer(answer: str, limit: int = 60, words: int = 6) -> str:
    """A page title made from an answer, when the admin gives none: the opening words of its first clause, not
    ending on a little word ("Claim land with a golden shovel: right-click ..." -> "Claim land with a golden
    shovel"; "Put 8 cobblestone in a ring ..." -> "Put 8 cobblestone in a ring")."""
    text = " ".join(answer.split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    clause = re.split(r"\s*[:;,\u2014\u2013(]\s*|\s+-\s+", first, maxsplit=1)[0]
    kept = (clause if len(clause.split()) >= 3 else first).split()[:words]
    while len(kept) > 1 and (kept[-1].lower().strip(".,;:!?") in _LITTLE_WORDS or len(" ".join(kept)) > limit
                             or re.fullmatch(r"[\d.,\-\u2013%]+", kept[-1])):
        kept.pop()
    title = " ".join(kept)[:limit].rstrip(" .!?,;:")
    return title[:1].upper() + title[1:] if title else "Taught answer"


_LITTLE_WORDS = frozenset("a an the and or but of to in on at by for with from into onto than as your my its their "
                          "is are be".split())


# --------------------------------------------------------------------------- comparing questions


def question_key(text: str) -> str:
    """A question's words alone: case, spacing, punctuation and apostrophes do not change it."""
    text = _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(_NON_WORD.sub(" ", text).replace("_", " ").split())


@dataclass(frozen=True)
class Term:
    surface: str            # the word as written (lower case)
    stem: str               # as the index stems it
    weight: float


def question_terms(text: str, analyzer: TermAnalyzer) -> tuple[Term, ...]:
    """The words of a question a paraphrase is compared on, with their weights (the module docstring)."""
    terms = []
    opening = True
    for word in analyzer.words(FILLER_PHRASES.sub(" ", question_key(text))):
        surface = word.surface.lower()
        if surface in FILLER:
            continue
        if opening and surface in YES_NO_OPENERS:
            terms.append(Term(YES_NO, YES_NO, WH_WEIGHT))
        opening = False
        if surface in WH_WORDS:
            terms.append(Term(surface, surface, WH_WEIGHT))
        elif surface in WEIGHTY:
            terms.append(Term(surface, surface, 1.0))
        elif not word.is_stop and len(surface) > 1:
            terms.append(Term(surface, word.stem, 1.0))
    return tuple(terms)


def similarity(asked: Sequence[Term], taught: Sequence[Term], known=None) -> float:
    """The weighted Jaccard overlap of two questions' terms: a pair of terms is one term when their stems are
    the same, or (``known``: the index's words) when one of them is a word the index does not know and the
    other is one edit away from it (a typo). 0 when either has no term."""
    total = sum(t.weight for t in asked) + sum(t.weight for t in taught)
    if not asked or not taught:
        return 0.0
    left, right = list(asked), list(taught)
    shared = 0.0
    for term in list(left):
        twin = next((t for t in right if t.stem == term.stem), None)
        if twin is not None:
            shared += min(term.weight, twin.weight)
            left.remove(term)
            right.remove(twin)
    if known is not None:
        for term in list(left):
            twin = next((t for t in right if t.weight == term.weight and _typo_of(term.surface, t.surface, known)),
                        None)
            if twin is not None:
                shared += term.weight
                left.remove(term)
                right.remove(twin)
    return shared / (total - shared)


def _typo_of(a: str, b: str, known) -> bool:
    """One of the words is unknown to the index and one edit from the other (same first letter, 3+ letters)."""
    from rapidfuzz.distance import OSA

    if min(len(a), len(b)) < 3 or a[0] != b[0] or a.isdigit() or b.isdigit():
        return False
    if _known(a, known) == _known(b, known):
        return False
    return OSA.distance(a, b, score_cutoff=1) <= 1


def _known(word: str, known) -> bool:
    """The index knows the word, or the word without a plural's ending."""
    return word in known or (word.endswith("s") and word[:-1] in known) or (word.endswith("es") and word[:-2] in known)


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Match:
    taught: TaughtAnswer
    how: str                # "words", "spelling" or "paraphrase"
    score: float            # 1.0, or the paraphrase's overlap


@dataclass
class TaughtMatcher:
    """The taught answers of one index generation, compared with questions as that generation reads them."""

    answers: Sequence[TaughtAnswer]
    index: "IndexView"
    threshold: float = PARAPHRASE_THRESHOLD
    known: object = None                    # the generation's words (index.spelling.Vocabulary), or None
    analyzer: TermAnalyzer = field(default_factory=TermAnalyzer)

    def __post_init__(self) -> None:
        self._by_words = {}
        self._by_spelling = {}
        self._terms = []
        for taught in self.answers:          # newest first: the newest of two taught answers to one question wins
            spelt = self.index.spelt(taught.question)
            self._by_words.setdefault(question_key(taught.question), taught)
            self._by_spelling.setdefault(question_key(spelt), taught)
            self._terms.append((taught, question_terms(spelt, self.analyzer)))

    def __len__(self) -> int:
        return len(self.answers)

    def match(self, question: str) -> Match | None:
        """The taught answer to ``question``, and how it matched; None when none does."""
        if not self.answers:
            return None
        found = self._by_words.get(question_key(question))
        if found is not None:
            return Match(found, "words", 1.0)
        spelt = self.index.spelt(question)
        found = self._by_spelling.get(question_key(spelt))
        if found is not None:
            return Match(found, "spelling", 1.0)
        best = self.closest(spelt)
        if best is not None and best[1] >= self.threshold:
            return Match(best[0], "paraphrase", best[1])
        return None

    def closest(self, spelt: str) -> tuple[TaughtAnswer, float] | None:
        """The taught answer whose question is closest to ``spelt`` (a question as the index spells it), with
        its overlap; None without taught answers."""
        terms = question_terms(spelt, self.analyzer)
        scored = [(taught, similarity(terms, theirs, self.known)) for taught, theirs in self._terms]
        return max(scored, key=lambda pair: pair[1], default=None)


def guide_folder(config: "Config", index_dir: str | os.PathLike | None) -> Path:
    """The guide folder whose ``taught/`` holds the taught answers: ``[panel] guide``, else the guide the index
    was built with (its guide source), else ``$JARVIS_HOME/guide``. The desk writes there; `jarvis ask`,
    `serve` and the workers read there (the same settings file and JARVIS_HOME, or the index's guide)."""
    if config.panel.guide:
        return Path(config.panel.guide).expanduser()
    if index_dir is not None:
        from jarvis.index import GuideSource, recorded_sources
        from jarvis.index.layout import IndexDir

        live = IndexDir(index_dir).live_or_none()
        for source in recorded_sources(live.meta.sources) if live is not None else []:
            if isinstance(source, GuideSource):
                return source.path
    return config.home / "guide"


@dataclass(frozen=True)
class Consulted:
    """What the taught answers say to one question: their answer, or the index the reader should read."""

    answer: "Answer | None"
    index: "IndexView"


class TaughtAnswers:
    """The taught answers of a guide folder, kept fresh (see the module docstring): read again when a file of
    ``taught/`` changes, compared with questions as the index's live generation reads them. Shared by one
    ``Jarvis``'s questions; thread-safe. ``docs_url``: the guide's web address (its pages' links)."""

    def __init__(self, guide: str | os.PathLike, index_dir: str | os.PathLike | None = None, docs_url: str = "",
                 threshold: float = PARAPHRASE_THRESHOLD) -> None:
        self.guide = Path(guide)
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self.docs_url = docs_url
        self.threshold = threshold
        self._stamp: tuple | None = None
        self._answers: list[TaughtAnswer] = []
        self._matcher: TaughtMatcher | None = None
        self._known: tuple[str, object] | None = None     # (generation version, its words)
        self._lock = threading.Lock()

    @classmethod
    def of_index(cls, config: "Config", index_dir: str | os.PathLike) -> "TaughtAnswers":
        """The taught answers `jarvis ask`, `serve` and the workers answer with on ``index_dir``."""
        guide = guide_folder(config, index_dir)
        return cls(guide, index_dir, docs_url=_docs_url(index_dir, guide))

    def all(self) -> list[TaughtAnswer]:
        """Every taught answer, newest first."""
        with self._lock:
            self._refresh()
            return list(self._answers)

    def consult(self, question: str, index: "IndexView", seconds: float = 0.0) -> Consulted:
        """``question``'s taught answer as an Answer (stated), or, when none matches, ``index`` as the reader
        should see it: without a taught answer's page, which an index built before taught answers were kept out
        of it may still hold (``WithoutTaught``)."""
        matcher = self.matcher(index)
        found = matcher.match(question)
        if found is not None:
            return Consulted(taught_answer(question, found, seconds, several_sites=len(index.sites) > 1), index)
        if not matcher.answers or GUIDE_SITE not in index.sites:
            return Consulted(None, index)
        return Consulted(None, WithoutTaught(index, frozenset(a.title.casefold() for a in matcher.answers)))

    def matcher(self, index: "IndexView") -> TaughtMatcher:
        """The taught answers, compared as ``index``'s generation reads questions (made again when a taught
        file or the generation changed)."""
        with self._lock:
            changed = self._refresh()
            if changed or self._matcher is None or self._matcher.index.version != index.version:
                known = self._words(index.version) if self._answers else None
                self._matcher = TaughtMatcher(self._answers, index, self.threshold, known)
            return self._matcher

    # ------------------------------------------------------------------ internals

    def _refresh(self) -> bool:
        """Read the taught answers again if a file changed; whether they did."""
        stamp = _stamp(self.guide)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self._answers = read_all(self.guide, self.docs_url)
        return True

    def _words(self, version: str):
        """The live generation's words (its spelling vocabulary), read once a generation; None without one."""
        if self._known is None or self._known[0] != version:
            from jarvis.index.layout import IndexDir
            from jarvis.index.spelling import Vocabulary

            live = IndexDir(self.index_dir).live_or_none() if self.index_dir is not None else None
            self._known = (version, Vocabulary.load(live.path) if live is not None else None)
        return self._known[1]


def _docs_url(index_dir: str | os.PathLike, guide: Path) -> str:
    """The web address the index records for ``guide`` ("" when none)."""
    from jarvis.index import GuideSource, recorded_sources
    from jarvis.index.layout import IndexDir

    live = IndexDir(index_dir).live_or_none()
    for source in recorded_sources(live.meta.sources) if live is not None else []:
        if isinstance(source, GuideSource) and source.path.resolve() == guide.resolve():
            return source.docs_url
    return ""


def _stamp(guide: Path | None) -> tuple:
    """What changes when a taught answer is added, edited or removed: the files' names, sizes and times."""
    if guide is None:
        return ()
    stamp = []
    for path in taught_files(guide):
        try:
            info = path.stat()
        except OSError:
            continue
        stamp.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


def taught_answer(question: str, found: Match, seconds: float = 0.0, several_sites: bool = False) -> "Answer":
    """The Answer a taught answer gives: stated, confidence 1.0, from the server guide's page of its title."""
    from jarvis.answer import Answer
    from jarvis.confidence.policy import TAUGHT, TAUGHT_CONFIDENCE

    taught = found.taught
    text = " ".join(taught.answer.split())
    return Answer(question, text, 1.0, taught.title or title_from_answer(text), TAUGHT_READER, seconds,
                  url=taught.url, pages=(taught.title,), sentence=text, confidence=TAUGHT_CONFIDENCE,
                  abstained=False, site=GUIDE_SITE, several_sites=several_sites, rule=TAUGHT, threshold=0.0,
                  signals={"taught": 1.0, "taught_overlap": round(found.score, 4)})


@dataclass(frozen=True)
class WithoutTaught:
    """An index view whose searches leave out the pages of taught answers (an index built while the guide's
    ``taught/`` was still read as pages holds them until it is built again): the reader never reads one."""

    inner: "IndexView"
    titles: frozenset           # the taught answers' titles, case-folded

    @property
    def version(self) -> str:
        return self.inner.version

    @property
    def sites(self) -> Sequence[str]:
        return self.inner.sites

    @property
    def glossary(self):
        return self.inner.glossary

    def spelt(self, question: str) -> str:
        return self.inner.spelt(question)

    def search(self, query: str, k: int = 3) -> list:
        """The top ``k`` pages that are no taught answer's, best first."""
        want = k
        while True:
            hits = self.inner.search(query, k=want)
            kept = [hit for hit in hits if not (hit.site == GUIDE_SITE and hit.title.casefold() in self.titles)]
            if len(kept) >= k or len(hits) < want:
                return kept[:k]
            want += len(hits) - len(kept)
