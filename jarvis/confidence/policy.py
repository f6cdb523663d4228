"""The answer policy: which confidence model judges an answer, the threshold it must reach, and whether it is
stated. One rule for every place that decides "stated or not sure": the pipeline (jarvis/pipeline.py), the
eval and the fitting of confidence models (jarvis.eval: ``stated``), and the desk's "likely wrong"
(``likely_wrong``).

An answer is judged by the rule of where it comes from:

- ``wiki``: a wiki's page: the reader's confidence model, fitted on wiki questions;
- ``guide``: a page of the server's own guide (site ``GUIDE_SITE``): the reader's guide model when one was
  fitted (the guide says what its author meant, and wiki questions say nothing of it), else the wiki's;
- ``taught``: an answer the admin taught at the desk: the admin's word, stated, never judged by a model.

Its threshold, first found: ``ReaderSettings.site_thresholds`` for the page's site (a wiki's name, or "server
guide"); ``ReaderSettings.answer_threshold`` (every site); the judging model's own (chosen with it on its
fit's risk-coverage curve, ``ConfidenceModel.threshold``). An answer is stated when there is one and its
confidence reaches its threshold. The answer records the rule and the threshold that applied
(``Answer.rule``, ``Answer.threshold``), and so does the question log.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

from jarvis.confidence.model import ConfidenceModel
from jarvis.crawler.guide import GUIDE_SITE

WIKI, GUIDE, TAUGHT = "wiki", "guide", "taught"
RULES = (WIKI, GUIDE, TAUGHT)
TAUGHT_CONFIDENCE = 1.0       # a taught answer is the admin's word


def stated(found: bool, confidence: float, threshold: float) -> bool:
    """The one rule: an answer is stated as fact when there is one and its confidence reaches the threshold."""
    return bool(found) and confidence >= threshold


def likely_wrong(rule: str, confidence: float | None, below: float) -> bool:
    """Whether a stated answer is worth the admin's look (the desk's "likely wrong"): a confidence below
    ``below`` under a rule that a model judges. A taught answer never is: it is the admin's own word."""
    return rule != TAUGHT and isinstance(confidence, (int, float)) and not isinstance(confidence, bool) \
        and confidence < below


@dataclass(frozen=True)
class Decision:
    """What the policy decided of one answer: under which rule, how sure, against which threshold."""

    rule: str
    confidence: float
    threshold: float

    @property
    def stated(self) -> bool:
        return stated(True, self.confidence, self.threshold)


@dataclass(frozen=True)
class AnswerPolicy:
    """The confidence models and thresholds of one reader (see the module docstring)."""

    wiki: ConfidenceModel
    guide: ConfidenceModel | None = None            # None: the wiki's model judges guide answers too
    answer_threshold: float | None = None           # ReaderSettings.answer_threshold: every site
    site_thresholds: Mapping[str, float] = field(default_factory=dict)   # ReaderSettings.site_thresholds

    @classmethod
    def of(cls, wiki: ConfidenceModel, guide: ConfidenceModel | None = None, settings=None) -> "AnswerPolicy":
        """The policy of these models with the thresholds ``settings`` (a ReaderSettings) sets."""
        if settings is None:
            return cls(wiki, guide)
        return cls(wiki, guide, settings.answer_threshold, dict(settings.site_thresholds))

    def with_models(self, wiki: ConfidenceModel | None = None, guide: ConfidenceModel | None = None) -> "AnswerPolicy":
        """The same thresholds with other models (a fit judges with a neutral one, then with what it fitted)."""
        return replace(self, wiki=wiki or self.wiki, guide=guide if guide is not None else self.guide)

    def rule_for(self, site: str) -> str:
        """The rule of an answer read on a page of ``site``."""
        return GUIDE if site == GUIDE_SITE else WIKI

    def model_for(self, site: str) -> ConfidenceModel:
        """The model that judges an answer read on a page of ``site``."""
        if self.rule_for(site) == GUIDE and self.guide is not None:
            return self.guide
        return self.wiki

    def threshold_for(self, site: str) -> float:
        """From this confidence up, an answer read on a page of ``site`` is stated."""
        if site in self.site_thresholds:
            return self.site_thresholds[site]
        if self.answer_threshold is not None:
            return self.answer_threshold
        return self.model_for(site).threshold

    def judge(self, site: str, signals: Mapping[str, float]) -> Decision:
        """The decision on an answer read on a page of ``site``, from the signals its model weighs."""
        return Decision(self.rule_for(site), self.model_for(site).predict(signals), self.threshold_for(site))

    def taught(self) -> Decision:
        """The decision on a taught answer: stated, whatever any model would say."""
        return Decision(TAUGHT, TAUGHT_CONFIDENCE, 0.0)
