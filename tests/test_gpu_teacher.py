"""bench/gpu_teacher.py, the GPU machine's one command, run end to end on the CPU with tiny models."""
from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "gpu_teacher.py"


CONTEXTS = ["Cow > Drops: When killed, a cow drops leather and raw beef.",
            "Cow: A cow is a passive mob found in grassy biomes of the Overworld.",
            "Zombie: Zombies spawn in the dark and burn in sunlight unless they wear a helmet.",
            "Torch: Torches are crafted from one coal or charcoal above one stick."]


def _examples(path: Path) -> Path:
    from jarvis.training.examples import ANSWER, OTHER_PAGE, TEACHER_ONLY, QAExample, write_examples

    def answer(question, context, text):
        return QAExample(question, context, text, context.index(text), context.split(":")[0], ANSWER, golds=(text,))

    write_examples(path, [answer("what do cows drop", CONTEXTS[0], "leather and raw beef"),
                          answer("where do zombies spawn", CONTEXTS[2], "in the dark"),
                          answer("how are torches crafted", CONTEXTS[3], "one coal or charcoal above one stick"),
                          QAExample("what do cows drop", CONTEXTS[2], "", -1, "Zombie", OTHER_PAGE),
                          QAExample("what do cows drop", CONTEXTS[1], "", -1, "Cow", TEACHER_ONLY),
                          QAExample("where do zombies spawn", CONTEXTS[3], "", -1, "Torch", TEACHER_ONLY)])
    return path


def _script(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})


def test_the_base_travels_in_int8_pieces_and_comes_back_close(tiny_qa_model, tmp_path):
    import numpy as np
    from safetensors.numpy import load_file

    from jarvis_lab.bench import gpu_teacher

    manifest = gpu_teacher.pack(Path(tiny_qa_model), tmp_path / "gpu", piece_mb=0.1, wheels=False)
    calls = sorted((tmp_path / "gpu").glob("call-*"))
    assert manifest["calls"] == len(calls) >= 2
    assert all(sum(p.stat().st_size for p in c.iterdir() if p.is_file() and p.name.startswith("base")) <= 0.1 * 2**20
               for c in calls)
    stash = tmp_path / "stash"
    for call in calls[:-1]:
        gpu_teacher.receive(call, stash)
    with pytest.raises(gpu_teacher.GpuRunError, match="not in"):          # the last call's piece not received
        gpu_teacher.unpack(stash, tmp_path / "base")
    gpu_teacher.receive(calls[-1], stash)
    base = gpu_teacher.unpack(stash, tmp_path / "base")
    before, after = load_file(str(Path(tiny_qa_model) / "model.safetensors")), load_file(str(base / "model.safetensors"))
    assert set(before) == set(after)
    for name, array in before.items():
        tolerance = np.abs(array).max(axis=-1, keepdims=True) / 127 if array.ndim == 2 else 0
        assert np.all(np.abs(after[name] - array) <= tolerance + 1e-6), name
    assert (base / "tokenizer.json").is_file() and (base / "config.json").is_file()


def test_the_gpu_command_trains_teacher_and_students_within_its_budget_on_a_cpu(tiny_qa_model, tmp_path):
    from jarvis_lab.qa_models import MINECRAFT_TEXT, build_distilbert_qa_model

    student = build_distilbert_qa_model(tmp_path / "student-base", MINECRAFT_TEXT, tokenizer_vocab=600)
    packed = _script("pack", "--base", str(tiny_qa_model), "--out", str(tmp_path / "gpu"), "--piece-mb", "0.2",
                     "--no-wheels")
    assert packed.returncode == 0, packed.stderr
    stash = tmp_path / "stash"
    for call in sorted((tmp_path / "gpu").glob("call-*")):
        received = _script("receive", str(call), "--stash", str(stash))
        assert received.returncode == 0, received.stderr
    examples = _examples(tmp_path / "train.jsonl.gz")
    out = tmp_path / "OUT"
    ran = _script("run", "--examples", str(examples), "--dev-examples", str(examples), "--out", str(out),
                  "--stash", str(stash), "--work", str(tmp_path / "work"), "--student", str(student),
                  "--max-seq-len", "64", "--doc-stride", "16", "--batch-size", "2",
                  "--teacher-epochs", "400", "--teacher-seconds", "3", "--student-seconds", "3", "--deadline", "600",
                  "--mpnet-layers", "1")
    assert ran.returncode == 0, ran.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["examples"] == {"gold": 4, "teacher_only": 2, "dev": 6}
    # The teacher's 400 epochs did not fit its 3 s: the steps were planned again to end within it.
    assert summary["teacher"]["steps"] < summary["teacher"]["planned_steps"]
    assert summary["teacher"]["train_seconds"] < 3 + 10      # the budget, and at most one step past it
    for name in ("teacher", "student", "plain", "mpnet1"):     # mpnet1: a one-layer cut of the teacher's base
        assert 0.0 <= summary[name]["dev_f1"] <= 1.0
    assert summary["mpnet1"]["int8_mb"] > 0
    assert summary["labels"]["windows"] >= 6 and (out / "labels.npz").is_file()
    # What comes back is small files: the distilled student in pieces, whole again.
    joined = tmp_path / "student.tar"
    joined.write_bytes(b"".join((out / name).read_bytes() for name in summary["student_files"]))
    with tarfile.open(joined) as tar:
        names = set(tar.getnames())
    assert {"student/model.int8.onnx", "student/jarvis-reader.json", "student/config.json"} <= names
    assert all(p.stat().st_size <= 16 * 2**20 for p in out.iterdir()) and len(list(out.iterdir())) <= 8
    # A run whose pieces never arrived (a machine given back between calls) says so in one line.
    lost = _script("run", "--examples", str(examples), "--out", str(tmp_path / "OUT2"),
                   "--stash", str(tmp_path / "empty"), "--work", str(tmp_path / "work2"), "--student", str(student))
    assert lost.returncode == 1 and len(lost.stderr.strip().splitlines()) == 1 and "receive" in lost.stderr


# The GPU machine's image has torch and transformers but not the pure-Python packages Jarvis's stages import
# (bench/gpu_teacher.py WHEELS); call-1 carries them as wheels, which `run` installs. This hides the installed
# copies from a child interpreter, as that image lacks them.
_GPU_IMAGE = '''
import importlib.machinery, sys
LACKING = {"whoosh", "bs4", "protego", "platformdirs", "cached_property", "soupsieve"}
class LikeTheGpuImage:
    def find_spec(self, name, path=None, target=None):
        if name in LACKING:
            raise ImportError(f"No module named {name!r} (the GPU image lacks it)")
        return None
sys.meta_path.insert(0, LikeTheGpuImage())
'''


def test_receiving_a_piece_needs_nothing_the_gpu_image_lacks(tiny_qa_model, tmp_path):
    from jarvis_lab.bench import gpu_teacher

    gpu_teacher.pack(Path(tiny_qa_model), tmp_path / "gpu", piece_mb=0.1, wheels=False)
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "sitecustomize.py").write_text(_GPU_IMAGE)
    env = {**__import__("os").environ, "PYTHONPATH": f"{tmp_path / 'image'}:{ROOT}"}
    lacking = subprocess.run([sys.executable, "-c", "import bs4"], capture_output=True, text=True, env=env)
    assert lacking.returncode != 0 and "GPU image" in lacking.stderr        # the stand-in image really lacks it
    stash = tmp_path / "stash"
    for call in sorted((tmp_path / "gpu").glob("call-*")):
        received = subprocess.run([sys.executable, str(SCRIPT), "receive", str(call), "--stash", str(stash)],
                                  capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        assert received.returncode == 0, received.stderr[-2000:]
    assert gpu_teacher.unpack(stash, tmp_path / "base").joinpath("model.safetensors").is_file()
