"""How sure Jarvis is: the confidence model (jarvis/confidence), its files, the answer threshold, and
`jarvis calibrate`. Synthetic pages written for these tests; the QA model is the tiny random one."""
from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.cli import main
from jarvis.config import Config, ReaderSettings
from jarvis.confidence import ConfidenceModel, ConfidenceModelError, fit_confidence, shipped_model_path
from jarvis.assembly import assemble
from jarvis.replies import answer_json, compose_reply

# Every sentence says "in the game": a gold answer of those words is inside any reply that quotes one.
PAGES = [
    Page("Glimmer", "http://127.0.0.1/w/Glimmer", [
        "A glimmer is a small glowing creature in the game that drifts over lakes at night.",
        "When defeated in the game, a glimmer drops 1-2 glow dust.",
    ]),
    Page("Lake cat", "http://127.0.0.1/w/Lake_cat", [
        "A lake cat is a shy animal in the game that fishes at the shore of lakes.",
        "Lake cats in the game can be tamed with raw fish.",
    ]),
    Page("Storm lantern", "http://127.0.0.1/w/Storm_lantern", [
        "A storm lantern is a light source in the game that keeps burning in the rain.",
        "It is crafted in the game from an iron frame and glow dust.",
    ]),
]
# Half the gold answers are in every quoted sentence ("in the game"), half in none ("purple hats").
QUESTIONS = """what do glimmers drop|Glimmer|in the game
how do you tame a lake cat|Lake cat|in the game
what is a storm lantern|Storm lantern|in the game
where do glimmers live|Glimmer|in the game
what do lake cats eat|Lake cat|purple hats
how is a storm lantern made|Storm lantern|purple hats
when do glimmers come out|Glimmer|purple hats
are lake cats shy|Lake cat|purple hats
"""


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    from jarvis.index import build_index

    root = tmp_path_factory.mktemp("confidence")
    write_corpus(PAGES, root / "corpus.jsonl")
    build_index(root / "corpus.jsonl", root / "index", progress=False)
    return root / "index"


def constant_model(probability: float, reader: str = "any") -> ConfidenceModel:
    """A model that gives every answer the same confidence (an intercept only)."""
    return ConfidenceModel(reader, (), (), (), (), math.log(probability / (1 - probability)))


@pytest.mark.parametrize("reader", ["fallback:minilm", "fallback:lexical", "span"])
def test_the_shipped_models_load_from_their_data_files(reader):
    path = shipped_model_path(reader)
    assert path.is_file() and path.parent.name == "data" and path.parent.parent.name == "readers"
    model = ConfidenceModel.load(path)
    assert model.reader == reader and model.features
    assert 0.0 <= model.predict({}) <= 1.0


def test_the_fallback_models_were_fitted_on_dev_sets_with_the_documented_threshold():
    for reader in ("fallback:minilm", "fallback:lexical"):
        fitted = ConfidenceModel.load(shipped_model_path(reader)).fitted_on
        sets = set(fitted["sets"]) | set(fitted["developed_on_sets"])
        assert fitted["answers"] > 500 and all(name.startswith(("realbed_", "sample_dev")) for name in sets)
        assert not {"realbed_dev5.txt", "questions.txt"} & sets   # held back: judged, never fitted on
    # Each reader's answer threshold is the one its fit chose (unless the settings name one).
    minilm = ConfidenceModel.load(shipped_model_path("fallback:minilm"))
    assert ReaderSettings().answer_threshold is None
    assert minilm.threshold == pytest.approx(minilm.fitted_on["threshold"], abs=0.0005)


def test_a_span_reader_without_a_fitted_model_says_so_once_and_gets_the_documented_function_of_its_logits(
        tmp_path, tiny_qa_model, small_index, caplog):
    config = Config(home=tmp_path / "home", reader=ReaderSettings(model=str(tiny_qa_model), max_seq_len=64,
                                                                  doc_stride=16))
    with caplog.at_level("WARNING", logger="jarvis.confidence"):
        with assemble(config, small_index) as jarvis:
            jarvis.ask("what do glimmers drop")
            jarvis.ask("what is a storm lantern")
    said = [r.getMessage() for r in caplog.records if "no confidence model fitted for it" in r.getMessage()]
    assert len(said) == 1 and jarvis.reader.name in said[0] and "jarvis calibrate" in said[0], said
    model = jarvis.policy.wiki
    assert model.features == ("span_minus_null",) and model.threshold == 0.628
    assert model.predict({"span_minus_null": 6.0}) > model.predict({"span_minus_null": 3.0}) > \
        model.predict({"span_minus_null": 0.0})


def test_confidence_models_are_found_by_the_readers_id_not_by_how_it_runs(tmp_path, caplog):
    from types import SimpleNamespace

    from jarvis.confidence import calibration_path, load_answer_policy
    from jarvis.readers import load_own_reader

    own = load_own_reader(ReaderSettings())
    assert (own.id, own.name) == ("jarvis-minilm-qa", "jarvis-minilm-qa+int8")
    with caplog.at_level("WARNING", logger="jarvis.confidence"):
        policy = load_answer_policy(own, ReaderSettings(), tmp_path)
    assert "no confidence model" not in caplog.text
    assert policy.wiki.fitted_on["threshold"] and policy.guide is not None           # both shipped for its id
    assert (policy.wiki.threshold, policy.guide.threshold) == (0.533, 0.291)
    # A user's model: by the id; one written under the display name (before ids) is still found.
    trained = SimpleNamespace(id="my-reader", name="my-reader+int8")
    constant_model(0.3).save(calibration_path(tmp_path, "my-reader+int8"))
    assert load_answer_policy(trained, ReaderSettings(), tmp_path).wiki.predict({}) == pytest.approx(0.3)
    constant_model(0.6).save(calibration_path(tmp_path, "my-reader"))
    assert load_answer_policy(trained, ReaderSettings(), tmp_path).wiki.predict({}) == pytest.approx(0.6)
    with pytest.raises(ConfidenceModelError, match="no confidence model for the reader fallback:none"):
        load_answer_policy(SimpleNamespace(id="fallback:none", name="fallback:none"), ReaderSettings(), tmp_path)


@pytest.mark.parametrize("probability, threshold, stated", [(0.7, 0.5, True), (0.7, 0.8, False), (0.5, 0.5, True)])
def test_the_threshold_splits_stated_from_unsure(tmp_path, small_index, probability, threshold, stated):
    path = constant_model(probability).save(tmp_path / "model.json")   # loaded from its file, as configured
    config = Config(home=tmp_path, reader=ReaderSettings(model="", reader="fallback:lexical",
                                                         confidence_model=str(path), answer_threshold=threshold))
    with assemble(config, small_index) as jarvis:
        answer = jarvis.ask("what do glimmers drop")
    assert answer.found and answer.confidence == pytest.approx(probability)
    assert answer.abstained is not stated
    if stated:
        assert compose_reply(answer).startswith(answer.text) and compose_reply(answer).endswith("(source: Glimmer)")
    else:
        assert compose_reply(answer).startswith("not sure — the Glimmer page says: ") and answer.url in compose_reply(answer)
        assert answer.text and answer_json(answer)["answer"] == answer.text   # the span is kept, just not stated


def test_the_answer_policy_picks_the_model_and_threshold_by_site_and_states_a_taught_answer():
    from jarvis.confidence import AnswerPolicy, likely_wrong
    from jarvis.crawler.guide import GUIDE_SITE

    wiki = ConfidenceModel("r", (), (), (), (), 0.0, fitted_on={"threshold": 0.4})      # 0.5 for every answer
    guide = ConfidenceModel("r-guide", (), (), (), (), 2.0, fitted_on={"threshold": 0.3})   # 0.88
    policy = AnswerPolicy(wiki, guide)
    decision = policy.judge("Minecraft Wiki", {})
    assert (decision.rule, round(decision.confidence, 2), decision.threshold, decision.stated) == ("wiki", 0.5, 0.4, True)
    decision = policy.judge(GUIDE_SITE, {})
    assert (decision.rule, round(decision.confidence, 2), decision.threshold) == ("guide", 0.88, 0.3)
    assert AnswerPolicy(wiki).judge(GUIDE_SITE, {}).confidence == pytest.approx(0.5)   # no guide model: the wiki's
    # The thresholds: a site's own, else the setting for every site, else the judging model's.
    settings = ReaderSettings(answer_threshold=0.6, site_thresholds={"Minecraft Wiki": 0.45})
    policy = AnswerPolicy.of(wiki, guide, settings)
    assert (policy.threshold_for("Minecraft Wiki"), policy.threshold_for("Other Wiki"),
            policy.threshold_for(GUIDE_SITE)) == (0.45, 0.6, 0.6)
    assert not policy.judge("Other Wiki", {}).stated
    taught = policy.taught()
    assert taught.rule == "taught" and taught.stated
    # The desk's "likely wrong": a low confidence under a model's rule; a taught answer never.
    assert likely_wrong("wiki", 0.5, 0.75) and not likely_wrong("wiki", 0.8, 0.75)
    assert not likely_wrong("taught", 0.0, 0.75) and not likely_wrong("wiki", None, 0.75)
    from jarvis.panel.log_view import likely_wrong as desk_flags   # the desk asks the policy
    logged = {"type": "question", "found": True, "abstained": False, "page": "Furnace", "confidence": 0.3}
    assert desk_flags({**logged, "rule": "wiki"}, 0.75) and not desk_flags({**logged, "rule": "taught"}, 0.75)


def test_a_site_threshold_from_the_settings_file_judges_that_sites_answers(tmp_path, small_index):
    """[reader.site_thresholds] in a settings file: the answers of that site are held against its threshold, and
    the answer and the question log say which rule and threshold applied."""
    from jarvis.settings_file import SettingsError, load_settings_file

    path = constant_model(0.7).save(tmp_path / "model.json")
    settings = tmp_path / "jarvis.toml"
    settings.write_text(f'[reader]\nreader = "fallback:lexical"\nconfidence_model = "{path}"\nanswer_threshold = 0.5\n'
                        '[reader.site_thresholds]\n"Sample Wiki" = 0.9\n', encoding="utf-8")
    config, _ = load_settings_file(settings, Config(home=tmp_path))
    assert config.reader.site_thresholds == {"Sample Wiki": 0.9}
    with assemble(replace(config, reader=replace(config.reader, model="")), small_index) as jarvis:
        answer = jarvis.ask("what do glimmers drop")
        site = answer.site
    assert answer.found and (answer.rule, answer.threshold) == ("wiki", 0.5)   # the page's site has no threshold
    config = replace(config, reader=replace(config.reader, model="", site_thresholds={site: 0.9}))
    with assemble(config, small_index) as jarvis:
        answer = jarvis.ask("what do glimmers drop")
    assert (answer.rule, answer.threshold, answer.abstained) == ("wiki", 0.9, True)
    assert (answer_json(answer)["rule"], answer_json(answer)["threshold"]) == ("wiki", 0.9)
    settings.write_text('[reader.site_thresholds]\n"Sample Wiki" = 1.5\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"\[reader\] site_thresholds: Sample Wiki = 1.5 is out of range"):
        load_settings_file(settings, Config(home=tmp_path))


def test_fitting_learns_the_signal_that_tells_right_from_wrong_and_is_calibrated():
    rng = random.Random(0)
    signals, right = [], []
    for _ in range(600):
        margin, noise = rng.uniform(-2, 2), rng.uniform(-2, 2)
        signals.append({"margin": margin, "noise": noise})
        right.append(rng.random() < 1 / (1 + math.exp(-2 * margin)))
    model = fit_confidence(signals, right, "test")
    assert model.weights()[0][0] == "margin" and abs(dict(model.weights())["noise"]) < 0.3 * model.weights()[0][1]
    for low in (-2.0, -1.0, 0.0, 1.0):   # predicted against observed in bins of the true signal
        inside = [(s, r) for s, r in zip(signals, right) if low <= s["margin"] < low + 1]
        predicted = sum(model.predict(s) for s, _ in inside) / len(inside)
        assert abs(predicted - sum(r for _, r in inside) / len(inside)) < 0.1


def test_fitting_needs_both_right_and_wrong_answers():
    with pytest.raises(ConfidenceModelError, match="right and wrong"):
        fit_confidence([{"a": 1.0}] * 5, [True] * 5, "test")


def test_a_bad_model_file_is_a_one_line_error(tmp_path, small_index, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfidenceModelError, match="bad JSON"):
        ConfidenceModel.load(bad)
    bad.write_text(json.dumps({"format": 1, "reader": "x", "features": ["a"], "mean": [0], "scale": [1],
                               "coef": [], "intercept": 0}), encoding="utf-8")
    with pytest.raises(ConfidenceModelError, match="differ in length"):
        ConfidenceModel.load(bad)
    code = main(["ask", "what do glimmers drop", "--index", str(small_index), "--reader", "fallback:lexical",
                 "--confidence-model", str(bad), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "differ in length" in err


def test_jarvis_calibrate_refits_a_span_reader_on_a_small_question_set(tmp_path, tiny_qa_model, small_index,
                                                                       capsys, monkeypatch):
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS, encoding="utf-8")
    corpus = small_index.parent / "corpus.jsonl"
    monkeypatch.setenv("JARVIS_HOME", str(tmp_path / "home"))
    assert main(["calibrate", "--questions", str(questions), "--corpus", str(corpus), "--index", str(small_index),
                 "--model", str(tiny_qa_model), "--no-int8", "-q"]) == 0
    out = capsys.readouterr().out
    written = tmp_path / "home" / "calibration" / "confidence-model.json"
    assert f"written to {written}" in out
    model = ConfidenceModel.load(written)
    assert model.reader == "model" and model.fitted_on["answers"] == 8 and model.fitted_on["sets"] == ["questions.txt"]
    assert {"span_minus_null", "span_logit", "null_logit", "top_score"} <= set(model.features)
    assert 0.0 <= model.fitted_on["threshold"] <= 1.0

    # From now on `jarvis ask` with that model uses it (it is found under $JARVIS_HOME by the reader's id), in
    # int8 too: the id is the model's, whatever runs it.
    assert main(["ask", "what do glimmers drop", "--index", str(small_index), "--model", str(tiny_qa_model),
                 "--no-int8", "--json", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reader"] == "model"
    assert main(["ask", "what do glimmers drop", "--index", str(small_index), "--model", str(tiny_qa_model),
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["reader"] == "model+int8" and "no confidence model" not in captured.err
    with assemble(Config(home=tmp_path / "home", reader=ReaderSettings(model=str(tiny_qa_model),
                                                                                 quantize=False)),
                            small_index) as jarvis:
        answer = jarvis.ask("what do glimmers drop")
    assert answer.confidence == pytest.approx(model.predict(answer.signals)) == pytest.approx(data["confidence"],
                                                                                             abs=1e-4)


def test_cross_validation_by_writer_judges_each_writer_with_a_model_of_the_others():
    from jarvis.eval.calibration import Observation, cross_validated, writer_of

    assert writer_of("w3_typos.txt") == "w3" and writer_of("realbed_dev2.txt") == "realbed"
    assert writer_of("questions.txt") == "questions.txt"

    def observation(set_name: str, i: int, right: bool) -> Observation:
        return Observation(set_name, i, f"q{i}", "Cow", "leather", "Cow", {"x": float(right), "noise": i % 3},
                           1.0 if right else 0.0, right, True)

    # Writer A's answers are all right and B's all wrong, and a signal says which: shuffled folds learn it;
    # judged one writer at a time, A's answers can only get what B's teach (all wrong: 0).
    observations = [observation("a_terse.txt", i, True) for i in range(20)]
    observations += [observation("b_terse.txt", i, False) for i in range(20)]
    shuffled = cross_validated(observations, "test")
    by_writer = cross_validated(observations, "test", by_writer=True)
    assert min(shuffled[:20]) > 0.5
    assert max(by_writer[:20]) == 0.0 and min(by_writer[20:]) == 1.0


@pytest.mark.parametrize("question, blank, riddle", [
    ("potato planks are crafted from a ___?", 1.0, 0.0),
    ("i hop around and nibble your carrots. who am i?", 0.0, 1.0),
    ("i soak up water up to 7 blocks away. what block am i?", 0.0, 1.0),
    ("what am i doing wrong with my farm?", 0.0, 0.0),      # "am i" mid-question is no riddle
    ("which biome am i in?", 0.0, 0.0),
    ("what do cows drop?", 0.0, 0.0),
])
def test_a_quiz_forms_blank_or_riddle_is_a_signal_of_the_confidence(question, blank, riddle):
    from jarvis.confidence import answer_signals
    from jarvis.lexical import TermAnalyzer

    signals = answer_signals(question, "raw fish", "Lake cat", TermAnalyzer())
    assert (signals["quiz_blank"], signals["quiz_riddle"]) == (blank, riddle)
