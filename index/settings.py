"""Search-time settings of retrieval: how the lexical and dense rankings are fused, and the page-kind prior.

Index-time choices (schema, analyzers, whether pages get vectors) are the profile's (profiles.py);
these only change how a built index is searched, so they can be tuned without a rebuild.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def _default_kind_prior() -> dict[str, float]:
    # A page that is not a current article about Minecraft itself ranks as if its fused score were
    # this share of what it is, unless the question asks for that kind (priors.asked_kinds).
    return {"article": 1.0, "tutorial": 0.35, "joke": 0.2, "removed": 0.3, "spinoff": 0.2, "version": 0.3,
            "disambiguation": 0.2}


@dataclass(frozen=True)
class RetrievalSettings:
    depth: int = 50                  # candidates taken from each ranking before fusion
    # Reciprocal rank fusion: score = sum of weight / (rrf_k + rank). A small rrf_k lets the top of
    # each ranking count (measured on the real-wiki dev set: k 10 > 2 > 60; dense weight 1.5 > 1 > 0.5).
    rrf_k: float = 10.0
    lexical_weight: float = 1.0
    dense_weight: float = 1.5
    kind_prior: dict[str, float] = field(default_factory=_default_kind_prior)
