"""Token-budget passage selection: the budget holds, reading order stays, the question's section wins."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from jarvis.config import ReaderSettings
from jarvis.readers.passages import PassageSelector
from jarvis.readers.question_kinds import DEFINITION, DROPS, PLACE, RECIPE, in_answer_section, question_topics
from jarvis.readers.ranking import PassageRanker
from jarvis.readers.base import Passage
from jarvis.readers.span import SpanReader

WORDS = ("cow drops leather beef zombie spawns dark light torch crafted coal stick creeper explodes "
         "block mob player iron diamond wool bed night biome village trade emerald").split()


def page(title: str, rank: int, sections: list[tuple[tuple[str, ...], str]], score: float = 0.0) -> list[Passage]:
    return [Passage(title, text, rank, i, section=section, page_score=score)
            for i, (section, text) in enumerate(sections)]


COW = page("Cow", 0, [
    ((), "A cow is a passive mob that lives in grassy biomes and wanders around slowly."),
    (("Spawning",), "Cows spawn in groups of four in most grassy biomes when the world is generated."),
    (("Behavior",), "A cow follows a player who holds wheat and can be milked with a bucket."),
    (("Drops",), "An adult cow leaves 0-2 leather and 1-3 raw beef when it dies."),
    (("Usage", "Breeding"), "Two cows fed with wheat breed and a calf appears between them."),
], score=12.0)
ZOMBIE = page("Zombie", 1, [
    ((), "A zombie is a common undead hostile mob that attacks villagers and players."),
    (("Spawning",), "Zombies spawn in the Overworld where the block light level is 0."),
    (("Drops",), "A zombie drops 0-2 rotten flesh and rarely an iron ingot, a carrot or a potato."),
], score=6.0)


@pytest.fixture(scope="module")
def reader(tiny_qa_model) -> SpanReader:
    return SpanReader.load(ReaderSettings(model=str(tiny_qa_model), max_seq_len=64, doc_stride=16,
                                          no_answer_margin=-1e9, quantize=False, backend="torch"))


def selector(reader: SpanReader, budget: int, **changes) -> PassageSelector:
    return PassageSelector(replace(reader.settings, token_budget=budget, **changes), tokenizer=reader.tokens)


def reader_tokens(reader: SpanReader, question: str, passages) -> int:
    """The tokens the span reader really runs for these passages (every window, question included)."""
    if not passages:
        return 0
    windows = reader._windows(reader._fit_question(question), [reader._context(p)[0] for p in passages])
    return sum(len(w.ids) for w in windows)


def test_question_topics_and_sections():
    assert question_topics("what do cows drop?") == [DROPS]
    assert PLACE in question_topics("where do zombies spawn")
    assert RECIPE in question_topics("how do i craft a torch")
    assert DEFINITION in question_topics("what is a creeper")
    assert question_topics("tell me a joke") == []
    assert in_answer_section([DROPS], COW[3].section) and not in_answer_section([DROPS], COW[1].section)
    assert in_answer_section([DEFINITION], COW[0].section) and not in_answer_section([DEFINITION], COW[3].section)


# The questions share no word but "cow" with the passage that answers them: the section decides.
@pytest.mark.parametrize("question, section", [
    ("what loot comes from cows?", ("Drops",)),
    ("where are cows found?", ("Spawning",)),
    ("how do you feed cows?", ("Usage", "Breeding")),
])
def test_the_section_matching_the_question_kind_is_read_first(reader, question, section):
    passages = COW + ZOMBIE
    one = reader_tokens(reader, question, [next(p for p in passages if p.section == section)])
    chosen = selector(reader, budget=one + 2).select(question, passages)   # room for one passage only
    assert [p.section for p in chosen.passages] == [section]
    assert chosen.passages[0].title == "Cow"   # the better page's section, not the zombie's


def test_what_is_reads_the_lead_of_the_page_it_names(reader):
    question = "what is a zombie"
    lead = ZOMBIE[0]
    chosen = selector(reader, budget=reader_tokens(reader, question, [lead]) + 2).select(question, COW + ZOMBIE)
    assert chosen.passages == [lead]


def test_chosen_passages_keep_reading_order(reader):
    chosen = selector(reader, budget=10_000).select("what do cows drop", list(reversed(COW + ZOMBIE)))
    assert chosen.passages == COW + ZOMBIE     # all of them fit: page rank, then position in the page
    some = selector(reader, budget=120).select("what do zombies and cows drop", COW + ZOMBIE)
    assert 1 < len(some.passages) < len(COW + ZOMBIE)
    assert some.passages == sorted(some.passages, key=lambda p: (p.page_rank, p.index))


def test_the_reported_tokens_are_what_the_reader_runs(reader):
    long_text = " ".join(WORDS * 6)            # several windows of 64 tokens with a stride of 16
    passages = COW + [Passage("Long", long_text, 2, 0)]
    question = "what do cows drop"
    chosen = selector(reader, budget=10_000).select(question, passages)
    assert chosen.passages == passages
    assert chosen.tokens == reader_tokens(reader, question, passages)


def test_budget_zero_reads_everything_and_empty_input_reads_nothing(reader):
    assert selector(reader, budget=0).select("what do cows drop", COW + ZOMBIE).passages == COW + ZOMBIE
    assert selector(reader, budget=500).select("what do cows drop", []).passages == []


def test_a_passage_larger_than_the_budget_is_cut_to_fit(reader):
    long_text = " ".join(WORDS * 6)
    question = "what do cows drop"
    chosen = selector(reader, budget=40).select(question, [Passage("Long", long_text, 0, 0)])
    assert len(chosen.passages) == 1 and long_text.startswith(chosen.passages[0].text)
    assert 0 < chosen.tokens <= 40
    assert reader_tokens(reader, question, chosen.passages) == chosen.tokens
    span = reader.read(question, chosen.passages)
    assert span is None or chosen.passages[0].text[span.start:span.end] == span.text


def test_without_a_tokenizer_the_estimate_keeps_the_budget():
    chooser = PassageSelector(ReaderSettings(token_budget=60))
    chosen = chooser.select("what do cows drop", COW + ZOMBIE)
    assert chosen.passages and chosen.tokens <= 60


class CountingEmbedder:
    """Unit vectors on two axes: "beef" texts point one way, everything else the other."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return [(1.0, 0.0) if ("beef" in t or "meat" in t) else (0.0, 1.0) for t in texts]


def test_dense_similarity_ranks_and_is_bounded(reader):
    embedder = CountingEmbedder()
    settings = replace(reader.settings, token_budget=0)
    chooser = PassageSelector(settings, tokenizer=reader.tokens, embedder=embedder)
    question = "where does meat come from"
    plain = PassageRanker(settings.passages).scores(question, COW + ZOMBIE)
    dense = chooser.ranker.scores(question, COW + ZOMBIE)
    assert dense[3] - plain[3] == pytest.approx(settings.passages.dense_weight)    # the beef passage gains
    assert all(d == pytest.approx(p) for i, (d, p) in enumerate(zip(dense, plain)) if i != 3)
    few = PassageRanker(replace(settings.passages, dense_candidates=2), embedder=embedder)
    few.scores(question, COW + ZOMBIE)
    assert embedder.calls[-1] == 3            # the question and the 2 best candidates, no more


passage_texts = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=120).map(" ".join),
                         min_size=1, max_size=12)


@hypothesis_settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=passage_texts, budget=st.integers(min_value=1, max_value=600),
       question=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join))
def test_the_budget_is_never_exceeded(reader, texts, budget, question):
    passages = [Passage(f"P{i % 3}", text, i % 3, i, section=(("Drops",) if i % 2 else ())) for i, text in enumerate(texts)]
    chosen = selector(reader, budget=budget).select(question, passages)
    assert chosen.tokens <= budget
    assert reader_tokens(reader, question, chosen.passages) == chosen.tokens
    assert chosen.passages == sorted(chosen.passages, key=lambda p: (p.page_rank, p.index))


@hypothesis_settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("abcdeXYZ019 .,;:-'éß\n"), max_size=80)
       | st.lists(st.sampled_from(WORDS + ["has", "were", "xp", "1.5", "e.g.", "Cows'", "what", "the"]),
                  max_size=20).map(" ".join))
def test_cached_terms_are_the_analyzers_terms(text):
    from jarvis.lexical import TermAnalyzer
    from jarvis.readers.ranking import CachedTerms

    analyzer = TermAnalyzer()
    assert CachedTerms(analyzer)(text) == analyzer.terms(text)
