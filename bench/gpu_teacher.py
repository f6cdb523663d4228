"""The teacher on a GPU machine, in one command: fine-tune MPNet-base for extractive QA, label the student's
windows with it, distil the student, and bring back what is small (docs/reader-training.md, "A teacher on a
GPU").

A GPU machine that reaches no package index cannot assemble the base from its parts, and the files carried
to it are limited (64 MiB a call, the checkout included), so the base travels in pieces:

    python bench/gpu_teacher.py pack --base DIR --out build/gpu          # here: int8 pieces, wheels, manifest
    # on the GPU machine, one call per piece folder build/gpu/call-N (each copies its piece to the stash):
    PYTHONPATH=. python3 bench/gpu_teacher.py receive build/gpu/call-1
    …
    PYTHONPATH=. python3 bench/gpu_teacher.py receive build/gpu/call-N && \\
    PYTHONPATH=. python3 bench/gpu_teacher.py run --examples build/gpu/data/train.jsonl.gz --dev-examples build/gpu/data/dev.jsonl.gz --out $OUT

``pack`` stores every 2-D weight of the base in int8 with a float32 scale per row (the rest as they are):
110M parameters in 110 MB instead of 438 MB; ``run`` turns them back into a float32 model before training.
``run`` works to a time budget: the teacher trains for ``--teacher-seconds``, the students for
``--student-seconds`` each (the steps planned to end within it); it writes to ``--out``: ``summary.json``
(dev F1 of the teacher, the distilled student and the plain one; steps, seconds, the GPU), ``labels.npz``
(the teacher's labels of the student's windows, top-16 float16: a student trains from it on a CPU; as
``labels.npz.NN`` pieces of 15 MiB when larger, ``cat labels.npz.* > labels.npz``), the
distilled student as ``student.tar.NN`` pieces of at most 15 MiB (its int8 export, config, tokenizer, card),
and ``log.txt``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import site
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _checkout_packages() -> None:
    """Where Jarvis is not installed (the GPU machine runs a copy of the checkout, with PYTHONPATH=. from its
    root), the stage folders (crawler/, index/, eval/) are found as jarvis.crawler, jarvis.index and
    jarvis.eval, as setup.py maps them when installed."""
    import importlib.util

    import jarvis

    if importlib.util.find_spec("jarvis.crawler") is None and str(ROOT) not in jarvis.__path__:
        jarvis.__path__.append(str(ROOT))


_checkout_packages()

STASH = Path("/tmp/jarvis-gpu")
MANIFEST = "manifest.json"
QUANTIZED = "base.int8.safetensors"
# Pure-Python packages the project imports that the GPU machine's image lacks (wheels carried with call 1).
WHEELS = ("whoosh-reloaded", "cached-property", "beautifulsoup4", "soupsieve", "protego", "platformdirs")
MiB = 1 << 20
log = logging.getLogger("gpu_teacher")


class GpuRunError(Exception):
    """One line: what is missing or wrong."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(MiB):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------- pack (here)


def quantize_weights(source: Path, target: Path) -> dict:
    """The base's weights with every 2-D float tensor in int8 (symmetric, one float32 scale per row)."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(source))
    out, quantized = {}, 0
    for name, array in weights.items():
        if array.dtype.kind == "f" and array.ndim == 2 and array.size >= 4096:
            scale = np.abs(array).max(axis=1, keepdims=True).astype(np.float32) / 127.0
            scale[scale == 0] = 1.0
            out[name + ".int8"] = np.clip(np.rint(array / scale), -127, 127).astype(np.int8)
            out[name + ".scale"] = scale
            quantized += array.size
        else:
            out[name] = array
    save_file(out, str(target))
    return {"tensors": len(weights), "int8_parameters": quantized}


def dequantize_weights(source: Path, target: Path) -> None:
    from safetensors.numpy import load_file, save_file

    packed = load_file(str(source))
    out = {}
    for name, array in packed.items():
        if name.endswith(".scale"):
            continue
        if name.endswith(".int8"):
            base = name[:-len(".int8")]
            out[base] = (array.astype("float32") * packed[base + ".scale"]).astype("float32")
        else:
            out[name] = array
    save_file(out, str(target), metadata={"format": "pt"})


def pack(base: Path, out: Path, piece_mb: float, wheels: bool = True) -> dict:
    """The base as int8 pieces of at most ``piece_mb`` MiB in ``out/call-1`` … ``call-N`` (one folder a GPU
    call carries), its small files and the wheels in call-1, and a manifest with the whole file's sha256."""
    weights = base / "model.safetensors"
    if not weights.is_file():
        raise GpuRunError(f"{base} holds no model.safetensors (assemble it first: jarvis teacher-base)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    began = time.perf_counter()
    quantized = out / QUANTIZED
    info = quantize_weights(weights, quantized)
    size, piece = quantized.stat().st_size, int(piece_mb * MiB)
    pieces = []
    with quantized.open("rb") as handle:
        number = 1
        while chunk := handle.read(piece):
            folder = out / f"call-{number}"
            folder.mkdir()
            name = f"{QUANTIZED}.{number:02d}"
            (folder / name).write_bytes(chunk)
            pieces.append(name)
            number += 1
    first = out / "call-1"
    files = [p.name for p in base.iterdir() if p.is_file() and p.suffix in (".json", ".txt", ".model")
             and p.stat().st_size < 4 * MiB and p.name != "README.md"]
    (first / "files").mkdir()
    for name in files:
        shutil.copy2(base / name, first / "files" / name)
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "-d", str(first / "wheels"), *WHEELS], check=True)
    manifest = {"base": base.name, "sha256": _sha256(quantized), "bytes": size, "pieces": pieces, "files": files,
                "calls": len(pieces), **info}
    (first / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    quantized.unlink()
    manifest["seconds"] = round(time.perf_counter() - began, 1)
    return manifest


# --------------------------------------------------------------------------- receive and run (GPU machine)


def receive(folder: Path, stash: Path = STASH) -> None:
    """Copy one call's pieces into the stash (it lasts while the machine stays up between calls)."""
    stash.mkdir(parents=True, exist_ok=True)
    for path in folder.iterdir():
        target = stash / path.name
        if path.is_dir():
            shutil.copytree(path, target, dirs_exist_ok=True)
        else:
            shutil.copy2(path, target)


def unpack(stash: Path, target: Path) -> Path:
    """The base, float32 again, from the stash's pieces (one line when a piece is missing or damaged)."""
    manifest_path = stash / MANIFEST
    if not manifest_path.is_file():
        raise GpuRunError(f"no {MANIFEST} in {stash}: receive call-1 first (the machine may have been given "
                          "back between calls; send every call-N again)")
    manifest = json.loads(manifest_path.read_text())
    missing = [name for name in manifest["pieces"] if not (stash / name).is_file()]
    if missing:
        raise GpuRunError(f"{len(missing)} of {len(manifest['pieces'])} pieces of the base are not in {stash} "
                          f"({', '.join(missing)}): receive them (the machine may have been given back between calls)")
    target.mkdir(parents=True, exist_ok=True)
    joined = target / QUANTIZED
    with joined.open("wb") as out:
        for name in manifest["pieces"]:
            with (stash / name).open("rb") as piece:
                shutil.copyfileobj(piece, out, MiB)
    if _sha256(joined) != manifest["sha256"]:
        raise GpuRunError(f"the base's pieces in {stash} joined do not have the packed sha256: receive them again")
    dequantize_weights(joined, target / "model.safetensors")
    joined.unlink()
    for name in manifest["files"]:
        shutil.copy2(stash / "files" / name, target / name)
    return target


def _install_wheels(stash: Path) -> None:
    wheels = sorted((stash / "wheels").glob("*.whl")) if (stash / "wheels").is_dir() else []
    missing = []
    for module in ("whoosh", "bs4", "protego", "platformdirs"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if not missing or not wheels:
        return
    target = stash / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--upgrade", "--target", str(target), *map(str, wheels)], check=True)
    site.addsitedir(str(target))   # the carried wheels, importable from here on


def _split(path: Path, out: Path, piece: int) -> list[str]:
    names = []
    with path.open("rb") as handle:
        number = 0
        while chunk := handle.read(piece):
            name = f"{path.name}.{number:02d}"
            (out / name).write_bytes(chunk)
            names.append(name)
            number += 1
    return names


def truncated_base(base: Path, layers: int, target: Path) -> Path:
    """The base with ``layers`` of its layers, evenly spaced (the first and the last kept)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(base))
    total = model.config.num_hidden_layers
    keep = sorted({round(i * (total - 1) / max(1, layers - 1)) for i in range(layers)})
    model.encoder.layer = torch.nn.ModuleList([model.encoder.layer[i] for i in keep])
    model.config.num_hidden_layers = len(keep)
    model.save_pretrained(str(target))
    AutoTokenizer.from_pretrained(str(base)).save_pretrained(str(target))
    return target


def run(args: argparse.Namespace) -> dict:
    """Teacher, labels, distilled student and plain student, within the budgets (see the module doc)."""
    began = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    stash = Path(args.stash)
    import torch

    from jarvis.training import (DistillSettings, TrainOptions, TrainSettings, label_examples, read_examples,
                                 train_on_examples)
    from jarvis.training.examples import TEACHER_ONLY

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    summary: dict = {"device": device, "budgets": {"teacher": args.teacher_seconds, "student": args.student_seconds}}
    base = Path(args.base) if args.base else unpack(stash, work / "base")
    summary["unpacked_seconds"] = round(time.perf_counter() - began, 1)
    examples = [e for path in args.examples for e in read_examples(Path(path))]
    dev = [e for path in args.dev_examples or [] for e in read_examples(Path(path))]
    gold = [e for e in examples if e.origin != TEACHER_ONLY]
    summary["examples"] = {"gold": len(gold), "teacher_only": len(examples) - len(gold), "dev": len(dev)}
    window = dict(max_seq_len=args.max_seq_len, doc_stride=args.doc_stride)

    def train(name: str, base_dir: str, epochs: float, lr: float, seconds: float, onnx: bool, **extra):
        settings = TrainSettings(epochs=epochs, batch_size=args.batch_size, learning_rate=lr, seed=args.seed,
                                 freeze_embeddings=False, time_budget=seconds)
        options = TrainOptions(out=work / name, base=base_dir, train=settings, export_onnx=onnx,
                               sources=tuple(Path(p).name for p in args.examples), **window, **extra)
        result = train_on_examples(examples if extra else gold, options, progress=False, dev=dev)
        summary[name] = {"steps": result.stats.steps, "planned_steps": result.stats.planned_steps,
                         "windows": result.windows, "train_seconds": round(result.stats.seconds, 1),
                         "dev_f1": round(result.dev.f1, 4) if result.dev else None,
                         "dev_exact": round(result.dev.exact, 4) if result.dev else None}
        log.info("%s: %s", name, result.summary())
        save()
        return result

    def save() -> None:
        # After every stage: a run stopped at its limit still brings back what it measured.
        summary["seconds"] = round(time.perf_counter() - began, 1)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    train("teacher", str(base), args.teacher_epochs, args.teacher_lr, args.teacher_seconds, onnx=False)
    labels_path = work / "labels.npz"
    t0 = time.perf_counter()
    label_options = TrainOptions(out=work / "labels", base=args.student, teacher=str(work / "teacher"),
                                 distill=DistillSettings(args.temperature, args.weight), **window)
    labels = label_examples(examples, label_options, labels_path, progress=False)
    # Brought back whole when small, else in pieces (a file that comes back is at most 16 MiB).
    if labels_path.stat().st_size <= 15 * MiB:
        shutil.copy2(labels_path, out / labels_path.name)
        label_files = [labels_path.name]
    else:
        label_files = _split(labels_path, out, 15 * MiB)
    summary["labels"] = {"windows": len(labels.targets), "seconds": round(time.perf_counter() - t0, 1),
                         "bytes": labels_path.stat().st_size, "files": label_files}
    save()
    student = train("student", args.student, args.student_epochs, args.student_lr, args.student_seconds, onnx=True,
                    teacher_labels=labels_path, distill=DistillSettings(args.temperature, args.weight))
    # The distilled student, without its torch weights, in pieces small enough to come back.
    bundle = work / "student.tar"
    with tarfile.open(bundle, "w") as tar:
        for path in sorted(student.out.iterdir()):
            if path.is_file() and path.suffix not in (".safetensors", ".bin"):
                tar.add(path, arcname=f"student/{path.name}")
    summary["student_files"] = _split(bundle, out, 15 * MiB)
    save()
    if not args.no_plain and args.deadline - (time.perf_counter() - began) > args.student_seconds + 30:
        train("plain", args.student, args.student_epochs, args.student_lr, args.student_seconds, onnx=False)
    else:
        summary["plain"] = "skipped (time)"
    if args.mpnet_layers:
        # A larger student: N of the base's layers, evenly spaced, distilled from its labels of its own windows.
        small = truncated_base(base, args.mpnet_layers, work / f"mpnet{args.mpnet_layers}-base")
        small_labels = work / f"labels-mpnet{args.mpnet_layers}.npz"
        label_examples(examples, TrainOptions(out=work / "labels", base=str(small), teacher=str(work / "teacher"),
                                              distill=DistillSettings(args.temperature, args.weight), **window),
                       small_labels, progress=False)
        result = train(f"mpnet{args.mpnet_layers}", str(small), args.student_epochs, args.student_lr,
                       args.student_seconds, onnx=True, teacher_labels=small_labels,
                       distill=DistillSettings(args.temperature, args.weight))
        summary[f"mpnet{args.mpnet_layers}"]["int8_mb"] = round(result.onnx.stat().st_size / 1e6, 1)
    save()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="the base as int8 pieces, one folder per GPU call (here)")
    p.add_argument("--base", required=True, help="the assembled base folder (jarvis teacher-base prints it)")
    p.add_argument("--out", default="build/gpu", help="where (default: %(default)s)")
    p.add_argument("--piece-mb", type=float, default=28.0,
                   help="MiB a call carries besides the checkout (default: %(default)s)")
    p.add_argument("--no-wheels", action="store_true", help="do not download the wheels the GPU image lacks")
    p = sub.add_parser("receive", help="copy one call's folder into the stash (GPU machine)")
    p.add_argument("folder")
    p.add_argument("--stash", default=str(STASH))
    p = sub.add_parser("run", help="teacher, labels, students, within a time budget (GPU machine)")
    p.add_argument("--examples", action="append", required=True, help="training examples (--write-examples)")
    p.add_argument("--dev-examples", action="append", help="dev examples, scored for every model")
    p.add_argument("--out", required=True, help="the small results ($OUT)")
    p.add_argument("--stash", default=str(STASH))
    p.add_argument("--work", default="/tmp/jarvis-gpu-work", help="models written here (not brought back)")
    p.add_argument("--base", default="", help="an unpacked teacher base folder (default: the stash's pieces)")
    p.add_argument("--student", default=str(ROOT / "jarvis" / "readers" / "data" / "jarvis-minilm-qa"),
                   help="the student's base (default: Jarvis's own reader, MiniLM, weights from its export)")
    p.add_argument("--teacher-seconds", type=float, default=240)
    p.add_argument("--student-seconds", type=float, default=75)
    p.add_argument("--deadline", type=float, default=540, help="seconds for the whole run (the plain student is "
                   "skipped when it would not fit)")
    p.add_argument("--teacher-epochs", type=float, default=3)
    p.add_argument("--teacher-lr", type=float, default=5e-5)
    p.add_argument("--student-epochs", type=float, default=6)
    p.add_argument("--student-lr", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-seq-len", type=int, default=256)
    p.add_argument("--doc-stride", type=int, default=96)
    p.add_argument("--temperature", type=float, default=2.0)
    p.add_argument("--weight", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-plain", action="store_true", help="skip the student trained without the teacher")
    p.add_argument("--mpnet-layers", type=int, default=0,
                   help="also distil a student of this many of the base's layers (its dev F1 and int8 size in the "
                        "summary; default: none)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.command == "receive":
        # Nothing of Jarvis is imported here: the GPU image lacks what its stages import until the wheels that
        # call-1 carries are installed, by run.
        receive(Path(args.folder), Path(args.stash))
        print(f"received {args.folder} into {args.stash}")
        return 0
    if args.command == "run":
        _install_wheels(Path(args.stash))
    from jarvis.errors import JarvisError

    try:
        if args.command == "pack":
            print(json.dumps(pack(Path(args.base), Path(args.out), args.piece_mb, not args.no_wheels), indent=2))
        else:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            logging.getLogger().addHandler(logging.FileHandler(Path(args.out) / "log.txt"))
            print(json.dumps(run(args), indent=2))
    except (GpuRunError, JarvisError) as exc:
        print(f"gpu_teacher: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
