"""The torch engine of the span reader: a transformers QA model called as the ONNX session is (numpy arrays in,
numpy logits out), on a CPU (dynamic int8, jarvis/readers/acquisition.py) or a GPU."""
from __future__ import annotations


class TorchQAModel:
    """A transformers QA model called like the ONNX session: numpy arrays in, numpy logits out."""

    def __init__(self, model) -> None:
        self.model = model.eval()
        self.backend = "torch-cuda" if str(getattr(model, "device", "cpu")).startswith("cuda") else "torch"

    def __call__(self, inputs: dict):
        import torch

        device = self.model.device
        with torch.inference_mode():
            output = self.model(**{k: torch.from_numpy(v).to(device) for k, v in inputs.items()})
        return output.start_logits.float().cpu().numpy(), output.end_logits.float().cpu().numpy()
