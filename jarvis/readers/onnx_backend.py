"""The span reader's ONNX Runtime backend: export a QA model once, run it with onnxruntime.

Export: ``torch.onnx.export`` (the TorchScript exporter) with dynamic batch and sequence axes, of the
model's plain ("eager") attention where the model can switch to it: transformers' default SDPA attention
traces into extra guards per layer (IsNaN, Where) and runs slower in onnxruntime on a CPU (Jarvis's own
reader, int8, 2 threads: p50 0.204 s against 0.147 s a question, bench/bench_reader.py); then, for int8,
``onnxruntime.quantization.quantize_dynamic`` (int8 weights, activations quantized per call). optimum's
exporter would do the same, but optimum-onnx pins ``transformers<4.58`` and would downgrade the project's
transformers, so the two library calls are made here directly.

Cache: the exported file lives under ``<export dir>/<fingerprint>/model[.int8].onnx``; the
fingerprint covers the model directory's path, the config and weight files (name, size,
modification time) and the exporter's versions, so a new model or a new onnxruntime exports
again and an unchanged one never does. Files are written under a temporary name and renamed,
so an interrupted export leaves nothing that looks finished.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Sequence

log = logging.getLogger(__name__)

OPSET = 17
EXPORT_FORMAT = 2            # bump when the export recipe below changes: old caches are not reused
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
OUTPUT_NAMES = ("start_logits", "end_logits")


def export_path(model_dir: Path, export_dir: Path, quantize: bool, label: str = "") -> Path:
    """Where the export of ``model_dir`` lives: one folder per model fingerprint, ``label`` (the model's
    name) in front so that a person can tell the folders apart."""
    import onnxruntime
    import torch

    digest = hashlib.sha256()
    digest.update(f"{EXPORT_FORMAT}|{OPSET}|{torch.__version__}|{onnxruntime.__version__}|".encode())
    digest.update(str(model_dir.resolve()).encode())
    for path in sorted(model_dir.iterdir()):
        if path.name == "config.json" or path.suffix in WEIGHT_SUFFIXES:
            stat = path.stat()   # follows the hub cache's symlinks to the blobs
            digest.update(f"|{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    name = "model.int8.onnx" if quantize else "model.onnx"
    return export_dir / f"{label or model_dir.name}-{digest.hexdigest()[:16]}" / name


def export_qa_model(model, input_names: Sequence[str], target: Path, quantize: bool) -> Path:
    """Export a transformers QA model (torch, eval mode) to ``target``; int8 weights when ``quantize``."""
    import torch

    class Logits(torch.nn.Module):
        """The model as a function of positional tensors, returning the two logit tensors."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            output = self.model(**dict(zip(input_names, inputs)))
            return output.start_logits, output.end_logits

    target.parent.mkdir(parents=True, exist_ok=True)
    # Two rows, the second padded: a trace of an all-ones mask may drop the mask (transformers skips it).
    example = tuple(torch.tensor([[1] * 8, [1] * 5 + [0] * 3]) if name == "attention_mask"
                    else torch.ones((2, 8), dtype=torch.long) * (0 if name == "token_type_ids" else 5)
                    for name in input_names)
    axes = {name: {0: "batch", 1: "length"} for name in (*input_names, *OUTPUT_NAMES)}
    attention = _use_eager_attention(model)
    try:
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as tmp:
            fp32 = Path(tmp) / "model.onnx"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # tracer and deprecation notices: the trace is checked by tests
                torch.onnx.export(Logits(), example, str(fp32), dynamo=False, input_names=list(input_names),
                                  output_names=list(OUTPUT_NAMES), dynamic_axes=axes, opset_version=OPSET)
            produced = fp32
            if quantize:
                produced = Path(tmp) / "model.int8.onnx"
                _quantize_onnx(fp32, produced)
            os.replace(produced, target)
    finally:
        model.eval()   # the TorchScript exporter leaves the module in training mode (dropout on)
        if attention is not None:
            model.set_attn_implementation(attention)   # the caller's model as it was
    return target


def weights_of_export(path: Path) -> dict:
    """The model's weights read back out of its export (``export_qa_model``; int8 or fp32): the state dict
    of the traced model, int8 tensors dequantized (as onnxruntime computes with them). Parameters keep
    their names in the graph (``model.<name>``), except the weights of the linear layers, which the trace
    transposes into anonymous MatMul inputs; those are named after the layer their node belongs to
    (``/model/<layer path>/MatMul``). What a new training can start from when only the export is at hand."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}

    def value(name: str):
        if name.endswith("_quantized"):
            base = name[:-len("_quantized")]
            scale = tensors[base + "_scale"].astype(np.float32)
            zero = tensors[base + "_zero_point"].astype(np.float32) if base + "_zero_point" in tensors else 0.0
            return (tensors[name].astype(np.float32) - zero) * scale
        return tensors[name].astype(np.float32)

    weights = {}
    for name in tensors:
        if name.startswith("model.") and not name.endswith(("_scale", "_zero_point")):
            weights[name[len("model."):].removesuffix("_quantized")] = value(name)
    for node in graph.node:
        if node.op_type not in ("MatMul", "MatMulInteger") or not node.name.startswith("/model/"):
            continue
        weight = node.input[1]
        if weight not in tensors or weight.startswith("model."):
            continue       # activations times activations (attention), or a parameter already named
        layer = node.name[len("/model/"):].rsplit("/", 1)[0].replace("/", ".")
        weights[f"{layer}.weight"] = np.ascontiguousarray(value(weight).T)
    return weights


def _use_eager_attention(model) -> str | None:
    """Switch ``model`` to eager attention for the trace; the implementation to restore afterwards (None:
    nothing was switched, because the model already uses it or cannot switch)."""
    current = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if current in (None, "eager") or not hasattr(model, "set_attn_implementation"):
        return None
    try:
        model.set_attn_implementation("eager")
    except (ValueError, NotImplementedError, AttributeError):
        return None
    return current if model.config._attn_implementation == "eager" else None


def _quantize_onnx(source: Path, target: Path) -> None:
    """Dynamic int8 quantization of the MatMul/Gemm weights (onnxruntime's quantizer)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantizer_log = logging.getLogger()   # the quantizer suggests "pre-processing" on the root logger
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        quantizer_log.setLevel(level)


class OnnxQAModel:
    """An exported QA model in an onnxruntime session: numpy inputs by name in, (start, end) logits out."""

    backend = "onnx"

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.path = path
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]

    def __call__(self, inputs: dict):
        start, end = self.session.run(list(OUTPUT_NAMES), {name: inputs[name] for name in self.input_names})
        return start, end
