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
    # How the two rankings are fused. "scores": each side's scores scaled to [0, 1] over its top
    # `depth` pages (BM25F by the best score, cosine min-max), then weighted and added. "rrf":
    # reciprocal rank fusion, sum of weight / (rrf_k + 1 + rank). Measured (IR top-3): scores beat rrf
    # on the real-wiki dev set (0.836 vs 0.800) and the sample wiki's set (0.980 vs 0.961). Dense weight
    # 0.8 rather than 1.0: the sample wiki's set 0.980 vs 0.961, the real-wiki dev set 0.818 vs 0.827.
    fusion: str = "scores"
    rrf_k: float = 10.0
    lexical_weight: float = 1.0
    dense_weight: float = 0.8
    # A page the lexical side did not find at all joins from the dense side only this similar to the
    # question (all-MiniLM-L6-v2 cosine): a paraphrase scores ~0.35 and more, nonsense ~0.1, and
    # "xylophone quasar" must find nothing rather than the nearest pages.
    dense_only_min_cosine: float = 0.25
    kind_prior: dict[str, float] = field(default_factory=_default_kind_prior)
