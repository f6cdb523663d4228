"""`jarvis eval`: the three evaluations end to end on a small question file, and their outputs."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from jarvis.eval import EvalOptions, QuestionFileError, run_eval
from jarvis.eval.eval_report import FULL, IR, QA
from jarvis.config import Config, ReaderSettings

QUESTIONS = """# a small set; Workbench is an alias of Crafting table in the bundled corpus
what do cows drop?|Cow|0-2 Leather and 1-3 Raw beef
how do i make a workbench?|Workbench|four Planks
where do blazes spawn?|blaze|Nether fortresses
"""


@pytest.fixture
def question_file(tmp_path):
    path = tmp_path / "questions.txt"
    path.write_text(QUESTIONS)
    return path


def test_eval_runs_every_evaluation_and_writes_the_outputs(tmp_path, question_file, bundled_corpus):
    config = Config(home=tmp_path / "home", reader=ReaderSettings(fallback="lexical"))
    out = tmp_path / "report"
    options = EvalOptions(questions=question_file, corpus=bundled_corpus, out_dir=out,
                          json_path=tmp_path / "results.json", models=[str(tmp_path / "no-such-model")],
                          quick=True, progress=False)
    report = run_eval(options, config)

    by_evaluation = {(c.evaluation, c.ran): c for c in report.configs}
    ir = by_evaluation[(IR, True)]
    assert ir.n == 3 and ir.score == 1.0, [q.retrieved for q in ir.questions]  # aliases and case match
    assert by_evaluation[(QA, True)].default and by_evaluation[(FULL, True)].default
    not_run = [c for c in report.configs if not c.ran]
    assert {c.evaluation for c in not_run} == {QA, FULL}
    assert all("no-such-model" in c.name or "no-such-model" in c.not_run_reason for c in not_run)
    cow = next(q for q in by_evaluation[(QA, True)].questions if q.expected_title == "Cow")
    assert cow.f1 == 1.0 and cow.em == 1.0  # the lexical fallback finds the cow drops verbatim

    data = json.loads((tmp_path / "results.json").read_text())
    assert {"ir_top3_accuracy", "qa_f1", "full_f1", "n"} <= set(data)
    assert data["n"] == 3 and data["ir_top3_accuracy"] == 1.0
    assert any(c["ran"] is False for c in data["configurations"])
    for name in ("report.md", "chart.png", "questions.csv", "results.json"):
        assert (out / name).stat().st_size > 0
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (out / "questions.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["evaluation"] for r in rows} == {IR, QA, FULL} and len(rows) == 3 * 3
    assert "not run" in (out / "report.md").read_text()

    # The player's view: every QA and full record says how sure Jarvis was and what the chat showed.
    full = data["per_question"][f"{FULL}:{by_evaluation[(FULL, True)].name}"]
    for record in full:
        assert {"confidence", "abstained", "reply", "sentence", "answer_title", "verdict"} <= set(record)
        assert 0.0 <= record["confidence"] <= 1.0 and record["reply"]
        assert record["verdict"] in {"right", "wrong", "unsure-expected", "unsure-other", "unknown"}
        assert (record["verdict"] in {"right", "wrong"}) is (not record["abstained"])
    view = data["players_view"]
    assert view["n"] == 3 and view["stated"] == view["right"] + view["wrong"]
    assert view["coverage"] == pytest.approx(view["stated"] / 3, abs=1e-4)
    assert (out / "trust.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "## The player's view" in (out / "report.md").read_text()


def test_eval_side_by_side_includes_the_baseline_profile(tmp_path, question_file, bundled_corpus):
    config = Config(home=tmp_path / "home", reader=ReaderSettings(model="", fallback="lexical"))
    options = EvalOptions(questions=question_file, corpus=bundled_corpus, out_dir=tmp_path / "r",
                          models=[str(tmp_path / "no-such-model")], progress=False)
    report = run_eval(replace(options, quick=False), config)
    names = {(c.evaluation, c.name) for c in report.configs if c.ran}
    assert (IR, "tuned") in names and (IR, "baseline") in names
    # The default reader (the first that loads: Jarvis's own, shipped) also reads the baseline index.
    assert (FULL, "baseline index + jarvis") in names


def test_a_question_with_no_words_is_reported_with_its_line(tmp_path, bundled_corpus):
    path = tmp_path / "q.txt"
    path.write_text("what do cows drop?|Cow|leather\n??|Cow|leather\n")
    options = EvalOptions(questions=path, corpus=bundled_corpus, out_dir=tmp_path / "r", progress=False)
    with pytest.raises(QuestionFileError, match=r"q\.txt:2:"):
        run_eval(options, Config(home=tmp_path / "home"))


def test_cli_eval_json_has_the_design_keys(tmp_path, question_file):
    result = subprocess.run(
        [sys.executable, "-m", "jarvis", "eval", "--quick", "-q", "--questions", str(question_file),
         "--model", str(tmp_path / "no-such-model"), "--json", str(tmp_path / "r.json"),
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "JARVIS_HOME": str(tmp_path / "home")})
    assert result.returncode == 0, result.stderr
    assert "IR top-3" in result.stdout and "not run" in result.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert {"ir_top3_accuracy", "qa_f1", "full_f1", "n"} <= set(data) and data["n"] == 3


def test_eval_and_ask_give_the_same_answer_confidence_and_reply(tmp_path, question_file, bundled_index, monkeypatch,
                                                                capsys):
    """`jarvis eval` measures what `jarvis ask` answers: for the same question and index both give the same
    answer, page, confidence and reply (both are put together by jarvis/assembly.py)."""
    from jarvis.cli import main

    monkeypatch.setenv("JARVIS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("JARVIS_MODEL", raising=False)
    results = tmp_path / "results.json"
    assert main(["eval", "--questions", str(question_file), "--index", str(bundled_index), "--quick", "-q",
                 "--model", str(tmp_path / "no-such-model"), "--json", str(results), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    per_question = json.loads(results.read_text())["per_question"]
    full = [records for name, records in per_question.items() if name.startswith(f"{FULL}:")]
    assert len(full) == 1 and len(full[0]) == 3
    for record in full[0]:
        assert main(["ask", record["question"], "--index", str(bundled_index), "--fallback", "--json", "--no-log",
                     "-q"]) == 0
        asked = json.loads(capsys.readouterr().out)
        assert asked["answer"] == record["answer"] and asked["title"] == record["answer_title"]
        assert asked["reply"] == record["reply"] and asked["abstained"] == record["abstained"]
        assert asked["confidence"] == round(record["confidence"], 4)   # --json rounds it to 4 places
    assert any(record["answer"] for record in full[0])   # not three empty answers agreeing
