"""The sentence reader: the best answer sentence of the top pages, trimmed to the part that answers.

1. Blocks (blocks.py): paragraphs, or a list with its lead-in line.
2. Which block is about the question: semantic similarity (MiniLM, index.dense.DenseEncoder),
   BM25 of the question's stemmed words, the page's search rank, whether the block opens its
   page (a question with no word beyond the page's subject asks for the definition), whether
   its section holds the kind of answer asked for ("Drops", "Spawning", "Crafting") or is named
   by a word of the question ("Taming" for "how do I tame"), and whether a sentence of it holds
   the kind of phrase asked for (phrases.py; the kinds: jarvis/readers/question_kinds.py).
3. Which page: the subject's own page. When a page of the results is what the question is about
   (every word of its title is asked; the best-ranked such page) and it says anything about the
   question, only its blocks are read: a page about something else never answers then, and on it
   the subject's own name says nothing.
4. Which sentence of the best blocks: the block's score, the question's words in the sentence,
   its place in the block, and how surely it holds the kind of phrase asked for.
5. Trimming (trimming.py, phrases.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from jarvis.crawler.table_rows import parse_row
from jarvis.crawler.tables import INGREDIENTS_HEADER
from jarvis.index.glossary import ACTION, NAME, PROSE, Glossary
from jarvis.config import FallbackSettings
from jarvis.readers import question_kinds
from jarvis.readers.fallback.blocks import Block, Sentence, split_blocks
from jarvis.readers.fallback.phrases import (EXPERIENCE, TOOL_MATERIAL, holds_answer_kind, is_no_drop, measure_units,
                                             names_a_place, query_terms, trim_to_answer_kind)
from jarvis.readers.question_kinds import (DROPS, METHOD, PLACE, PROPERTY_STEMS, QUANTITY, RECIPE, SURE_SECTION, TOOL,
                                      counted_words, measure_headers, section_fit)
from jarvis.readers.fallback.trimming import answer_opening, answer_start, clause_end, says_something, strip_span
from jarvis.lexical import TermAnalyzer, Word, bm25_scores
from jarvis.readers.base import ReaderNeeds, Passage, Span
from jarvis.readers.ranking import relative


# Candidate sentences compared with each other for the confidence model's signals: the margin of each over
# the others and whether the others' answers agree with it.
COMPARED_CANDIDATES = 5


@dataclass
class ScoredBlock:
    block: Block
    words: float            # BM25 of the question's words, relative to the best block
    rank: float             # 1 for the top page, 0 for the last one read
    lead: float             # 1 when the block opens its page
    phrase: float           # 1 when a sentence of it holds the kind of phrase asked for (a number, a place...)
    subject: float = 0.0    # 1 when its page is what the question is about
    section: float = 0.0    # 1 when its section holds the kind of answer asked for, -1 when it never does
    semantic: float = 0.0   # MiniLM cosine similarity to the question (0 when not computed)
    score: float = 0.0

    def combine(self, weights: dict[str, float]) -> "ScoredBlock":
        self.score = sum(weight * getattr(self, part) for part, weight in weights.items())
        return self


@dataclass
class ScoredSentence:
    sentence: Sentence
    block: ScoredBlock
    words: float             # BM25 of the question's words in the sentence, relative to the best
    kind_match: float = 0.0  # how surely it holds the kind of phrase asked for (see _holds_kind)
    score: float = field(default=0.0)

    def combine(self, settings: FallbackSettings) -> "ScoredSentence":
        weights = settings.sentence_weights
        position = 1.0 / (1 + self.sentence.position)
        self.score = (weights["block"] * self.block.score + weights["words"] * self.words
                      + weights["position"] * position + settings.type_weight * self.kind_match)
        return self


class SentenceReader:
    """Best answer sentence of the top pages, trimmed; ``encoder=None`` is the lexical variant."""

    needs = ReaderNeeds()   # it ranks the passages itself and reads them all

    def __init__(self, encoder=None, settings: FallbackSettings | None = None, glossary: Glossary | None = None) -> None:
        self.encoder = encoder              # index.dense.DenseEncoder, or None
        self.settings = settings or FallbackSettings()
        self.glossary = glossary if glossary is not None else Glossary.bundled()   # players' words -> the wiki's
        self.analyzer = TermAnalyzer()
        self.name = "fallback:minilm" if encoder is not None else "fallback:lexical"
        self.id = self.name     # which confidence models were fitted for it
        self.block_weights = (self.settings.block_weights_minilm if encoder is not None
                              else self.settings.block_weights_lexical)

    def warm_up(self) -> None:
        """Nothing is left to load: its sentence encoder (or none, lexical) was given to it, loaded (the searcher's)."""

    def read(self, question: str, passages: Sequence[Passage]) -> Span | None:
        """The best sentence's answer, or None when nothing read mentions anything asked."""
        found = self.candidates(question, passages, 1)
        return found[0] if found else None

    def candidates(self, question: str, passages: Sequence[Passage], n: int) -> list[Span]:
        """The answers of the ``n`` best sentences, best first, each with the signals of how it won or lost
        (``Span.signals``): a fitted confidence model may choose another than the first (jarvis/confidence)."""
        # The first few are compared with each other (margins, agreement) however many are asked for.
        scored = self.score_sentences(question, _leading_pages(passages, self.settings.min_page_share))
        scored = scored[:max(n, COMPARED_CANDIDATES)]
        if not scored:
            return []
        trims = [self.trim(question, s.sentence) for s in scored]
        answers = [s.sentence.passage.text[start:end] for s, (start, end) in zip(scored, trims)]
        similarity = self._sentence_similarity(question, scored[:n])
        answer_kind = question_kinds.answer_kind(question)
        spans = []
        for rank, (candidate, (start, end)) in enumerate(zip(scored[:n], trims)):
            signals = self._signals(scored, rank, answers, (start, end), answer_kind)
            if similarity is not None:
                signals["sentence_semantic"] = similarity[rank]
            passage = candidate.sentence.passage
            spans.append(Span(passage.text[start:end], candidate.score, passage, start, end,
                              sentence=(candidate.sentence.start, candidate.sentence.end), signals=signals))
        return spans

    def _signals(self, scored: list[ScoredSentence], rank: int, answers: list[str], trimmed: tuple[int, int],
                 answer_kind: str | None) -> dict[str, float]:
        """How a candidate sentence fared, for the confidence model: its scores and their parts, its place and
        margin among the candidates, whether the others say the same, and what kind of answer was asked for."""
        candidate = scored[rank]
        sentence = candidate.sentence
        others = [s.score for i, s in enumerate(scored) if i != rank]
        agreement = [_word_overlap(answers[rank], answer) for i, answer in enumerate(answers) if i != rank]
        signals = {
            "candidate_rank": float(rank),
            "sentence_score": candidate.score,
            "sentence_margin": candidate.score - max(others, default=0.0),
            "sentence_words": candidate.words,
            "kind_match": candidate.kind_match,
            "block_score": candidate.block.score,
            "block_words": candidate.block.words,
            "block_semantic": candidate.block.semantic,
            "block_section": candidate.block.section,
            "block_subject": candidate.block.subject,
            "block_lead": candidate.block.lead,
            "table_row": float(parse_row(sentence.passage.text) is not None),
            "trimmed_share": (trimmed[1] - trimmed[0]) / max(1, sentence.end - sentence.start),
            "candidates": float(len(scored)),
            "agreement": max(agreement, default=0.0),
            "agreeing": float(sum(a >= 0.5 for a in agreement)),
            "same_page_share": (sum(s.sentence.passage.title == sentence.passage.title for s in scored) - 1)
                               / max(1, len(scored) - 1),
            "has_kind": float(answer_kind is not None),
        }
        if answer_kind is not None:
            signals[f"kind_{answer_kind}"] = 1.0
        return signals

    def _sentence_similarity(self, question: str, scored: list[ScoredSentence]) -> list[float] | None:
        """MiniLM cosine of the question and each candidate sentence (read with its page's title), or None
        for the lexical reader."""
        if self.encoder is None:
            return None
        vectors = self.encoder.embed([question] + [f"{s.sentence.passage.title}: {s.sentence.text}" for s in scored])
        return [max(0.0, float(x)) for x in (vectors[1:] @ vectors[0]).tolist()]

    # ------------------------------------------------------------------ blocks

    def score_blocks(self, question: str, passages: Sequence[Passage]) -> list[ScoredBlock]:
        """The blocks of the passages, best first; [] when none shares a word with the question."""
        settings = self.settings
        blocks = split_blocks(passages)
        answer_kind = question_kinds.answer_kind(question)
        query = query_terms(self.analyzer, self.glossary.expand(question, (NAME, ACTION, PROSE)),
                            answer_kind)
        if not blocks or not query:
            return []
        words = relative(bm25_scores(query, [self.analyzer.terms(b.text) for b in blocks]))
        if not any(words):
            return []  # nothing read mentions anything asked: Jarvis does not know
        words = [1.0 if self._row_named(b.text, query) else x for b, x in zip(blocks, words)]
        worst_rank = max(b.passages[0].page_rank for b in blocks) or 1
        weights = dict(self.block_weights)
        subjects = self.subject_titles(query, [p.title for p in sorted(passages, key=lambda p: p.page_rank)])
        top_title = min(passages, key=lambda p: p.page_rank).title
        definition = answer_kind is None and set(query) <= set(self.analyzer.terms(subjects[0] if subjects else top_title))
        if definition:
            weights["lead"] = settings.definition_lead_weight
        elif answer_kind == PLACE:
            weights["lead"] = settings.place_lead_weight
        if answer_kind:
            weights["phrase"] = settings.block_kind_weight
            weights["subject"] = settings.block_subject_weight
        weights["section"] = settings.section_weight
        asked = set(query) - {t for title in subjects for t in self.analyzer.terms(title)}
        scored = [ScoredBlock(b, words=x, rank=1.0 - b.passages[0].page_rank / worst_rank,
                              lead=float(b.opens_page),
                              phrase=min(1.0, max((self._holds_kind(answer_kind, s) for s in b.sentences()), default=0.0)),
                              subject=float(b.title in subjects),
                              section=0.0 if definition else self._section_score(answer_kind, asked, b))
                  .combine(weights) for b, x in zip(blocks, words)]
        # The subject's own page answers when it says anything about the question (see the module doc).
        if any(s.subject and s.words > 0 for s in scored):
            scored = [s for s in scored if s.subject]
            # ... where its own name says nothing: what else of the question a block says counts.
            rest = [t for t in query if t in asked]
            own = (relative(bm25_scores(rest, [self.analyzer.terms(s.block.text) for s in scored])) if rest
                   else [0.0] * len(scored))
            for block, x in zip(scored, own):
                block.words = x
                block.combine(weights)
        scored.sort(key=lambda b: -b.score)
        if self.encoder is None:
            return scored
        # The title goes with the text: "It drops 0-2 leather" is about the page's subject.
        candidates = scored[:settings.max_embedded]
        vectors = self.encoder.embed([question] + [f"{c.block.title}: {c.block.text}" for c in candidates])
        for candidate, similarity in zip(candidates, (vectors[1:] @ vectors[0]).tolist()):
            candidate.semantic = max(0.0, similarity)
            candidate.combine(weights)
        return sorted(candidates, key=lambda b: -b.score) + scored[settings.max_embedded:]

    def subject_titles(self, query: list[str], titles: Sequence[str]) -> list[str]:
        """The page the question is about, of ``titles`` in retrieval order: the best ranked one whose
        title's words are all asked. Retrieval weighed the whole question: "regen potion" is about
        Regeneration (found first), not Potion; "dark oak mineshafts" about Mineshaft, not Dark oak.

        A page named only by what is asked about a thing ("Drops", "Spawn", "Breeding") is the subject
        only when no page names the thing itself: "what do cows drop?" is about Cow, not Drops.
        """
        asked = set(query)
        about = {title: set(terms) for title in dict.fromkeys(titles) for terms in [self.analyzer.terms(title)]
                 if terms and set(terms) <= asked}
        things = {title: terms for title, terms in about.items() if not terms <= PROPERTY_STEMS}
        about = things or about
        if not about:
            return []
        return [next(iter(about))]

    def _section_score(self, answer_kind: str | None, asked: set[str], block: Block) -> float:
        section = block.passages[0].section
        if not section:
            return 0.0
        by_kind = section_fit(answer_kind, section)
        if by_kind:
            return by_kind
        if answer_kind not in (DROPS, QUANTITY) and section_fit(DROPS, section[:1]) > 0:
            return 0.0   # "Drops › Breeding" is what breeding drops, not how to breed
        named = set(self.analyzer.terms(" ".join(section)))
        return 1.0 if named & asked else 0.0

    # ------------------------------------------------------------------ sentences

    def score_sentences(self, question: str, passages: Sequence[Passage]) -> list[ScoredSentence]:
        """The sentences of the best few blocks, best first."""
        settings = self.settings
        answer_kind = question_kinds.answer_kind(question)
        best_blocks = self.score_blocks(question, passages)[:settings.typed_blocks if answer_kind else settings.plain_blocks]
        # The player's own words, with the wiki's verbs for them ("pick up" -> "obtained"): the wiki's
        # names (glossary) helped find the blocks, but in a sentence they mostly match the definition
        # ("A desert pyramid, also known as a desert temple, is ...").
        query = query_terms(self.analyzer, self.glossary.expand(question, (ACTION, PROSE)), answer_kind)
        candidates = [(block, s) for block in best_blocks for s in block.block.sentences()]
        if not candidates:
            return []
        # On the subject's own page its name says nothing: "Glimmer Skull" is no better a drop of
        # the glimmer than "Glow Dust".
        subject_terms = {t for title in {b.block.title for b in best_blocks if b.subject}
                         for t in self.analyzer.terms(title)}   # as the block stage found it
        query = [t for t in query if t not in subject_terms]
        words = relative(bm25_scores(query, [self.analyzer.terms(s.text) for _, s in candidates],
                                      b=settings.sentence_length_norm))
        # A table row named by the question ("Pigstep — ...; Length: 2:28" for "how long is pigstep")
        # is about what was asked, however often its name appears in the other candidates.
        words = [1.0 if self._row_named(s.passage.text, query) else x for (_, s), x in zip(candidates, words)]
        measures, units = measure_headers(question), measure_units(question)
        later_row = _later_row_penalty(passages, settings.later_row_step) if answer_kind == DROPS else {}
        scored = [ScoredSentence(s, b, x, self._holds_kind(answer_kind, s, measures, units, listed=bool(b.block.lead_in))
                                 - later_row.get(id(s.passage), 0.0))
                  .combine(settings) for (b, s), x in zip(candidates, words)]
        return sorted(scored, key=lambda s: -s.score)

    def _holds_kind(self, answer_kind: str | None, sentence: Sentence, measures: tuple[str, ...] = (), units=None,
                    listed: bool = False) -> float:
        """How surely a sentence holds the kind of answer asked for: 1 for a phrase of that kind;
        ``settings.sure_kind_match`` for a number in the units of the measure asked for ("every ...
        minutes" for "how often"), a tool of a named material, or an item of the list in the Drops
        section; ``settings.table_row_kind_match`` for a row of a table in the section that lists such
        answers, or with a column of the measure asked for ("Length" for "how long"); else 0."""
        settings = self.settings
        text = sentence.passage.text
        row = parse_row(text)
        in_its_section = section_fit(answer_kind, sentence.passage.section) >= SURE_SECTION
        if row is not None and in_its_section:
            if answer_kind == RECIPE:   # a row without ingredients ("Block of Netherite: 9") is no sure recipe
                return settings.table_row_kind_match if _ingredient_cells(text, row) else 1.0
            if answer_kind == DROPS and any(c.isdigit() for c in text[row.subject_end:]) \
                    and not is_no_drop(text[row.subject_start:row.subject_end]):
                return settings.table_row_kind_match
        if row is not None and answer_kind == METHOD:
            return 0.0   # a table row states facts; how to do something is told in prose
        if row is not None and answer_kind == QUANTITY and measures:
            headers = {word for c in row.cells for word in text[c.header_start:c.header_end].lower().split()}
            if headers & set(measures):
                return settings.table_row_kind_match
        if answer_kind == DROPS and listed and in_its_section and not EXPERIENCE.search(text):
            return settings.sure_kind_match   # an item of the list under "Witches drop:"
        matches = float(holds_answer_kind(answer_kind, sentence.text))
        if matches and answer_kind == QUANTITY and units is not None and units.search(sentence.text):
            return settings.sure_kind_match
        if matches and answer_kind == TOOL and TOOL_MATERIAL.search(sentence.text):
            return settings.sure_kind_match
        if matches and answer_kind == PLACE and names_a_place(sentence.text):
            return settings.sure_kind_match
        return matches

    def _row_named(self, text: str, query: list[str]) -> bool:
        row = parse_row(text)
        if row is None:
            return False
        named = set(self.analyzer.terms(text[row.subject_start:row.subject_end]))
        return bool(named) and named <= set(query)

    def trim(self, question: str, sentence: Sentence) -> tuple[int, int]:
        """Character range (in the passage) of the part of the sentence that answers."""
        text = sentence.passage.text
        words = [Word(w.surface, w.stem, w.start + sentence.start, w.end + sentence.start)
                 for w in self.analyzer.words(sentence.text)]
        subject = {w.stem for w in self.analyzer.words(sentence.passage.title)}
        question_words = self.analyzer.words(question)
        cut = answer_start(question_words, words, subject)
        start = (answer_opening(text, sentence.start, words[cut].start, sentence.end) if cut is not None
                 else sentence.start)
        end = clause_end(text, start, sentence.end)
        if not says_something([w for w in words if start <= w.start < end]):
            start, end = sentence.start, sentence.end  # nothing left worth saying: the whole sentence
        asked = {w.stem for w in question_words if not w.is_stop} - subject
        answer_kind = question_kinds.answer_kind(question)
        row = parse_row(text)
        if row is not None and sentence.start <= row.subject_start:
            headers = asked | {stem for word in measure_headers(question) for stem in self.analyzer.terms(word)}
            return self._trim_row(answer_kind, headers, text, row)
        typed = trim_to_answer_kind(answer_kind, text, sentence.start, sentence.end, start, end,
                             lambda phrase: len(asked & set(self.analyzer.terms(phrase))), question,
                             units=measure_units(question), counts=self._counter(question))
        if typed is not None:
            start, end = typed
        return strip_span(text, start, end)

    def _counter(self, question: str):
        """Whether a number phrase counts what a "how many" question counts (question_kinds.counted_words)."""
        counted = set(self.analyzer.terms(counted_words(question)))
        return lambda phrase: bool(counted & set(self.analyzer.terms(phrase)))

    def _trim_row(self, answer_kind: str | None, asked: set[str], text: str, row) -> tuple[int, int]:
        """The answer in a table row: what the row is about for drops and recipes (the item, the
        ingredients), else the cell whose header or value names what was asked, else the row's subject."""
        if answer_kind == RECIPE:
            # "Golden Apple — Ingredients: Gold Ingot+ Apple": how it is made; a row without an
            # ingredient list (a "Crafting ingredient" row) is what the subject makes.
            ingredients = _ingredient_cells(text, row)
            if ingredients:
                return ingredients[0].value_start, ingredients[0].value_end
        if answer_kind not in (DROPS, RECIPE) and row.cells:
            cells = [(len(asked & set(self.analyzer.terms(text[c.header_start:c.header_end]))), c)
                     for c in row.cells]
            matched, best = max(cells, key=lambda pair: pair[0])
            if not matched and asked & set(self.analyzer.terms(text[row.subject_start:row.subject_end])):
                # A transposed table: the row is the property asked for ("Hardness — Glimmer block: 0.5").
                matched, best = 1, row.cells[0]
            if matched:
                typed = trim_to_answer_kind(answer_kind, text, best.value_start, best.value_end, best.value_start, best.value_end)
                return typed if typed is not None else (best.value_start, best.value_end)
        return row.subject_start, row.subject_end


def _leading_pages(passages: Sequence[Passage], share: float) -> list[Passage]:
    """The passages of the pages the retriever scored at least ``share`` of the top page's score (all of
    them when the pages carry no scores, as when the eval gives the expected page)."""
    top = max((p.page_score for p in passages), default=0.0)
    if top <= 0 or share <= 0:
        return list(passages)
    return [p for p in passages if p.page_score >= share * top]


def _later_row_penalty(passages: Sequence[Passage], step: float) -> dict[int, float]:
    """``step`` times the number of table rows before each row in the same section of its page: a drop
    table lists the usual drops first and the rare ones (a skull, "Nothing") last."""
    seen: dict[tuple, int] = {}
    penalty = {}
    for passage in passages:
        if parse_row(passage.text) is None:
            continue
        key = (passage.title, passage.page_rank, passage.section)
        penalty[id(passage)] = step * seen.get(key, 0)
        seen[key] = seen.get(key, 0) + 1
    return penalty


def _ingredient_cells(text: str, row) -> list:
    return [c for c in row.cells if INGREDIENTS_HEADER.match(text[c.header_start:c.header_end])]


def _word_overlap(a: str, b: str) -> float:
    """Token F1 of two answers (lower-cased words): 1 when they say the same, 0 when nothing in common."""
    left, right = a.lower().split(), b.lower().split()
    common = sum(min(left.count(w), right.count(w)) for w in set(left))
    if not common:
        return 0.0
    precision, recall = common / len(left), common / len(right)
    return 2 * precision * recall / (precision + recall)
