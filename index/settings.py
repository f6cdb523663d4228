"""Search-time settings of retrieval: how the lexical and dense rankings are fused, and the page-kind prior.

Index-time choices (schema, analyzers, whether pages get vectors) are the profile's (profiles.py);
these only change how a built index is searched, so they can be tuned without a rebuild.
"""
from __future__ import annotations

from dataclasses import dataclass, field


# The server guide's tie-break: a guide page wins over a wiki page that matches up to 1.3 times better
# (its fused score counts 1.3 times). Measured with Blockhaven's guide beside the sample wiki
# (bench/bench_guide.py): with no prior the best wiki page outscores the right guide page on 3 of 22
# guide questions, by at most 1.24 times; the first wiki questions (of 181) to fall to a guide page need
# 1.14 and 1.15 (two weak matches: the words "how many" and "set", "blocks"), the next 1.42. 1.3 sits in
# the middle of 1.24-1.42: all 22 guide questions and 179 of the 181 wiki questions keep their site.
SERVER_GUIDE_PRIOR = 1.3
FUSIONS = ("scores", "rrf")   # RetrievalSettings.fusion: how the lexical and dense rankings are fused


def _default_page_kind_prior() -> dict[str, float]:
    # A page that is not a current article about Minecraft itself ranks as if its fused score were
    # this share of what it is, unless the question asks for that kind (priors.asked_page_kinds).
    # The server's own guide (kind "server") counts for more than a wiki page: when a guide page and a
    # wiki page match a question about equally, the guide wins (docs/retrieval.md, bench/bench_guide.py).
    return {"article": 1.0, "tutorial": 0.35, "joke": 0.2, "removed": 0.3, "spinoff": 0.2, "version": 0.3,
            "disambiguation": 0.2, "server": SERVER_GUIDE_PRIOR}


@dataclass(frozen=True)
class RetrievalSettings:
    depth: int = 50                  # candidates taken from each ranking before fusion
    # How the two rankings are fused. "scores": each side's scores scaled to [0, 1] over its top
    # `depth` pages (BM25F by the best score, cosine min-max), then weighted and added. "rrf":
    # reciprocal rank fusion, sum of weight / (rrf_k + 1 + rank). Measured (IR top-3): scores beat rrf
    # on the real-wiki dev set (0.836 vs 0.800) and the sample wiki's set (0.980 vs 0.961). Dense weight
    # 0.8 rather than 1.0: the sample wiki's set 0.980 vs 0.961, the real-wiki dev set 0.818 vs 0.827.
    fusion: str = "scores"
    # Where the question encoder's ONNX export is kept ("": none; the encoder then runs in torch). Set by
    # jarvis.config to $JARVIS_HOME/onnx: a search needs neither torch nor transformers once it is there.
    encoder_cache: str = ""
    rrf_k: float = 10.0
    lexical_weight: float = 1.0
    dense_weight: float = 0.8
    # A page the lexical side did not find at all joins from the dense side only this similar to the
    # question (all-MiniLM-L6-v2 cosine): a paraphrase scores ~0.35 and more, nonsense ~0.1, and
    # "xylophone quasar" must find nothing rather than the nearest pages.
    dense_only_min_cosine: float = 0.25
    page_kind_prior: dict[str, float] = field(default_factory=_default_page_kind_prior)
    # Read a question's chat spelling and typos against the index's words before searching (spelling.py;
    # indexes whose profile keeps a vocabulary). Off: the words as typed.
    spelling: bool = True
    # Passage profiles (profiles.py): the passage encoder, a folder trained by `jarvis train-encoder` ("": Jarvis's
    # shipped one, else all-MiniLM-L6-v2); it must be the one the index was built with (the vectors record it).
    encoder_model: str = ""
    # A passage profile ranks pages by their best passages: of at least this many (10 a page asked for, else).
    page_passages: int = 30

    def fused_part(self, rank: int, scaled: float) -> float:
        """One ranking's share of a fused score: the scaled score ("scores"), or 1 / (rrf_k + 1 + rank) ("rrf")."""
        if self.fusion == "rrf":
            return 1.0 / (self.rrf_k + 1 + rank)
        return scaled
