"""Training the retrieval models (jarvis/training: passage_pairs.py, encoder.py, reranker.py) on tiny random BERTs
and a small wiki, and using what they write: the encoder folder run by onnxruntime alone, the reranker ordering the
passages the pipeline reads and settling yes/no questions."""
from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("torch")

from jarvis.crawler.corpus import Page, write_corpus  # noqa: E402
from jarvis.index import Searcher, build_index  # noqa: E402
from jarvis.training.passage_pairs import (PairExample, PairQuestion, build_pair_examples, gold_paragraphs,  # noqa: E402
                                           read_pair_examples, write_pair_examples)
from jarvis.training.trainer import TrainSettings  # noqa: E402

MOBS = ["cow", "pig", "sheep", "chicken", "zombie", "skeleton", "spider", "creeper", "enderman", "blaze"]
DROPS = ["leather", "porkchop", "wool", "feather", "flesh", "bone", "string", "gunpowder", "pearl", "rod"]
PLACES = ["plains", "forest", "meadow", "taiga", "cave", "desert", "jungle", "swamp", "end", "nether"]


def wiki() -> list[Page]:
    return [Page(title=mob.capitalize(), url=f"http://127.0.0.1/w/{mob}", site="Test Wiki",
                 paragraphs=[f"The {mob} is a mob found in the {place}.", f"When killed, a {mob} drops {drop}.",
                             f"A {mob} cannot swim in lava." if i % 2 else f"A {mob} can swim in water."],
                 sections=[[], ["Drops"], ["Behavior"]])
            for i, (mob, drop, place) in enumerate(zip(MOBS, DROPS, PLACES))]


def questions() -> list[PairQuestion]:
    out = []
    for i, (mob, drop, place) in enumerate(zip(MOBS, DROPS, PLACES)):
        out += [PairQuestion(f"what does a {mob} drop", mob.capitalize(), (drop,), ("Drops",), "t1", "trivia"),
                PairQuestion(f"where does the {mob} live", mob.capitalize(), (place,), (), "t1", "trivia"),
                PairQuestion(f"can a {mob} swim in {'lava' if i % 2 else 'water'}", mob.capitalize(),
                             ("cannot swim" if i % 2 else "can swim",), ("Behavior",), "t1", "yesno",
                             "no" if i % 2 else "yes")]
    return out


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    from jarvis_lab.qa_models import build_bert_models

    root = tmp_path_factory.mktemp("retrieval-training")
    write_corpus(wiki(), root / "corpus.jsonl")
    build_index(root / "corpus.jsonl", root / "lexical", profile="lexical", progress=False)
    texts = [t for page in wiki() for t in page.paragraphs] + [q.text for q in questions()]
    encoder, qa = build_bert_models(root / "models", texts * 3)
    with Searcher(root / "lexical") as searcher:
        examples, report = build_pair_examples(questions(), wiki(), searcher.snapshot(), negatives=3, progress=False)
    return root, encoder, qa, examples, report


def test_examples_pair_each_question_with_its_gold_passage_and_passages_that_do_not_answer(bed, tmp_path):
    _, _, _, examples, report = bed
    assert report.used == len(questions())
    cow = next(e for e in examples if e.question.startswith("what does a cow drop"))
    assert cow.positive == "Cow > Drops: When killed, a cow drops leather."
    assert cow.negatives and all("leather" not in n for n in cow.negatives)
    assert next(e for e in examples if e.question.startswith("can a pig")).verdict == "no"
    assert read_pair_examples(write_pair_examples(examples, tmp_path / "pairs.jsonl.gz")) == examples


def test_a_question_whose_gold_is_the_page_name_pairs_with_its_named_section():
    page = wiki()[0]
    named = PairQuestion("which mob drops leather", "Cow", ("Cow",), ("Drops",))
    assert gold_paragraphs(page, named) == [1]


def _accuracy(score, examples) -> float:
    """The share of examples whose gold passage scores above every one of its negatives."""
    return sum(all(score(e.question, e.positive) > score(e.question, n) for n in e.negatives)
               for e in examples) / len(examples)


def test_the_trained_encoder_runs_on_onnxruntime_and_ranks_gold_passages_first(bed, tmp_path):
    from jarvis.index.dense import DenseEncoder
    from jarvis.training.encoder import EncoderTraining, train_encoder

    _, encoder_base, _, examples, _ = bed
    settings = TrainSettings(epochs=40, batch_size=8, learning_rate=3e-3, warmup=0.05, freeze_embeddings=False,
                             bf16=False)
    before = train_encoder(examples, tmp_path / "untrained", replace_epochs(settings, 0.01), EncoderTraining(),
                           base=encoder_base, progress=False)
    after = train_encoder(examples, tmp_path / "encoder", settings, EncoderTraining(), base=encoder_base,
                          sources=["t1"], progress=False)
    assert after.steps > before.steps
    trained, untrained = DenseEncoder.from_folder(tmp_path / "encoder"), DenseEncoder.from_folder(before.out)
    assert trained.backend == "onnx" and trained.name == "jarvis-passage-encoder" and trained.digest
    vectors = trained.embed(["what does a cow drop", "Cow > Drops: When killed, a cow drops leather."])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    cosine = lambda enc: (lambda q, p: float(enc.embed([q])[0] @ enc.embed([p])[0]))
    assert _accuracy(cosine(trained), examples) > max(0.8, _accuracy(cosine(untrained), examples))


def replace_epochs(settings: TrainSettings, epochs: float) -> TrainSettings:
    from dataclasses import replace

    return replace(settings, epochs=epochs)


def test_the_trained_reranker_orders_passages_and_settles_yes_no_questions(bed, tmp_path):
    from jarvis.readers.rerank import Reranker
    from jarvis.training.reranker import RerankerTraining, train_reranker

    _, _, qa_base, examples, _ = bed
    settings = TrainSettings(epochs=30, batch_size=8, learning_rate=3e-3, warmup=0.05, freeze_embeddings=False,
                             bf16=False)
    train_reranker(examples, tmp_path / "reranker", settings, RerankerTraining(negatives=3, verdict_weight=2.0),
                   base=str(qa_base), progress=False)
    reranker = Reranker(tmp_path / "reranker")
    reranker.warm_up()
    assert reranker.name == "jarvis-reranker"
    # Its gold passage above all three negatives (chance: 0.25). The tiny model's hard negatives come from a
    # dense side whose floats move with the suite's thread settings: 0.7 to 1.0 seen across runs.
    assert _accuracy(lambda q, p: reranker.run(q, [p])[0], examples) >= 0.6
    yes_no = [e for e in examples if e.verdict]
    said = [reranker.verdict(e.question, e.positive) for e in yes_no]
    assert sum(s[0] == e.verdict for s, e in zip(said, yes_no)) >= 0.8 * len(yes_no)
    assert all(0.5 <= p <= 1.0 for _, p in said)


def test_a_reranker_folder_with_a_missing_model_is_a_one_line_error(tmp_path):
    from jarvis.readers.rerank import Reranker, RerankerUnavailableError

    (tmp_path / "jarvis-reranker.json").write_text('{"name": "x", "max_tokens": 64}')
    with pytest.raises(RerankerUnavailableError, match="incomplete .*model.int8.onnx"):
        Reranker(tmp_path).warm_up()


def test_no_duplicate_gold_passage_shares_a_batch():
    from jarvis.training.encoder import no_duplicate_batches

    examples = [PairExample(f"q{i}", f"p{i % 7}", ("n",), "T") for i in range(60)]
    batches = no_duplicate_batches(examples, 5, random.Random(0))
    assert sorted(e.question for b in batches for e in b) == sorted(e.question for e in examples)
    assert all(len({e.positive for e in b}) == len(b) for b in batches)
