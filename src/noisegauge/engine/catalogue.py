"""The metric catalogue: every fact about a metric, written once, and every table derived.

One ``MetricSpec`` per metric holds its name, the other names users know (aliases, Ragas',
RAGChecker's), which direction is better, its labels, its report group, the verdict checks
it reads, where RAGChecker writes 0.0 instead of our *undefined*, the public class that
computes it and the function over a sample's verdicts. The CLI, the results file, the
report, the gates, RAGChecker's format, compare and stress all read these specs, so adding
a metric is its spec plus its function:

>>> from noisegauge.engine.catalogue import MetricSpec, register, spec
>>> from noisegauge.engine.metrics import MetricValue
>>> toy = register(MetricSpec("toy_share", "toy share", "toy", "higher", "answer",
...                           compute=lambda j: MetricValue(1.0)))
>>> spec("toy_share").label, "toy_share" in family()
('toy share', True)
>>> unregister("toy_share")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from ..verdicts import Verdict
from . import metrics as m
from .matrix import ClaimVerdicts
from .metrics import Compat, Judged, MetricValue, check_compat
from .ranked import context_precision_ranked

__all__ = ["Direction", "Empty", "GROUPS", "Group", "Kind", "METRIC_CHECKS", "METRIC_NAMES",
           "MetricSpec", "all_specs", "canonical", "compute_metrics", "diagnostics", "family",
           "label", "lower_is_better", "names", "neutral", "register", "registered", "short", "spec",
           "unregister"]

#: ``lower``/``higher``: which way is better; ``none``: neither is, in itself.
Direction = Literal["lower", "higher", "none"]
#: Where the report shows the metric.
Group = Literal["noise", "answer", "retrieval", "diagnostic"]
#: ``family``: computed for every sample from its verdicts (RAGChecker's eleven);
#: ``extra``: a column on request; ``diagnostic``: beside the family, never in its algebra.
Kind = Literal["family", "extra", "diagnostic"]
#: A denominator that can be empty: response claims (R), reference claims (G), chunks (n),
#: reference claims some chunk entails (``covered``).
Empty = Literal["response_claims", "reference_claims", "chunks", "covered"]
RagcheckerGroup = Literal["overall", "retriever", "generator"]

GROUPS: Mapping[Group, str] = {
    "noise": "Noise and grounding",
    "answer": "Answer",
    "retrieval": "Retrieval",
    "diagnostic": "Diagnostic, beside the family (not part of its algebra)",
}


@dataclass(frozen=True)
class MetricSpec:
    """Everything the package knows about one metric."""

    name: str
    label: str
    short: str
    direction: Direction
    group: Group
    kind: Kind = "family"
    #: The value from one sample's verdicts (None: computed elsewhere, e.g. from embeddings).
    compute: Callable[[Judged], MetricValue] | None = None
    #: The ``ClaimVerdicts`` matrices it reads: a doubtful verdict there is a doubt about it.
    checks: tuple[str, ...] = ()
    #: Other names accepted wherever a metric is named (``--metrics``, gates, thresholds).
    aliases: tuple[str, ...] = ()
    #: How Ragas users know it (documentation only: Ragas' definitions can differ).
    ragas: str | None = None
    #: Its key in RAGChecker's output, and the group of RAGChecker's aggregate it is in.
    ragchecker: str | None = None
    ragchecker_group: RagcheckerGroup | None = None
    #: RAGChecker writes 0.0 where one of these is empty (we say undefined, with a reason).
    ragchecker_zero: tuple[Empty, ...] = ()
    #: RAGChecker gives NaN where one of these is empty (after ``ragchecker_zero``).
    ragchecker_nan: tuple[Empty, ...] = ()
    #: The public class in ``noisegauge`` that computes it (None: a generic one is made).
    cls: str | None = None
    #: Shown in the short summaries (the stress table, the report's curves).
    key: bool = False

    def __post_init__(self) -> None:
        if self.kind == "family" and self.compute is None:
            raise ValueError(f"metric {self.name!r}: a family metric needs compute=")


_CLAIMS = ("answer2response", "retrieved2response", "retrieved2answer")

_BUILT_IN: tuple[MetricSpec, ...] = (
    MetricSpec("noise_sensitivity_relevant", "noise sensitivity (relevant)", "NS rel", "lower",
               "noise", compute=m.noise_sensitivity_relevant, checks=_CLAIMS,
               aliases=("noise_sensitivity_in_relevant",),
               ragas="NoiseSensitivity(mode='relevant')",
               ragchecker="noise_sensitivity_in_relevant", ragchecker_group="generator",
               ragchecker_zero=("response_claims", "chunks", "reference_claims"),
               cls="NoiseSensitivity", key=True),
    MetricSpec("noise_sensitivity_irrelevant", "noise sensitivity (irrelevant)", "NS irr",
               "lower", "noise", compute=m.noise_sensitivity_irrelevant, checks=_CLAIMS,
               aliases=("noise_sensitivity_in_irrelevant",),
               ragas="NoiseSensitivity(mode='irrelevant')",
               ragchecker="noise_sensitivity_in_irrelevant", ragchecker_group="generator",
               ragchecker_zero=("response_claims", "chunks", "reference_claims"),
               cls="NoiseSensitivity", key=True),
    MetricSpec("hallucination", "hallucination", "halluc.", "lower", "noise",
               compute=m.hallucination, checks=("answer2response", "retrieved2response"),
               ragchecker="hallucination", ragchecker_group="generator",
               ragchecker_zero=("response_claims", "chunks"), cls="Hallucination", key=True),
    MetricSpec("self_knowledge", "self-knowledge", "self-kn.", "none", "noise",
               compute=m.self_knowledge, checks=("answer2response", "retrieved2response"),
               ragchecker="self_knowledge", ragchecker_group="generator",
               ragchecker_zero=("response_claims", "chunks"), cls="SelfKnowledge"),
    MetricSpec("faithfulness", "faithfulness", "faithful.", "higher", "noise",
               compute=m.faithfulness, checks=("retrieved2response",), ragas="Faithfulness",
               ragchecker="faithfulness", ragchecker_group="generator",
               ragchecker_zero=("response_claims", "chunks"), cls="Faithfulness", key=True),
    MetricSpec("precision", "precision", "prec.", "higher", "answer", compute=m.precision,
               checks=("answer2response",), aliases=("answer_precision",),
               ragchecker="precision", ragchecker_group="overall",
               ragchecker_zero=("response_claims",), cls="AnswerPrecision", key=True),
    MetricSpec("recall", "recall", "recall", "higher", "answer", compute=m.recall,
               checks=("response2answer",), aliases=("answer_recall",), ragchecker="recall",
               ragchecker_group="overall", ragchecker_zero=("reference_claims",),
               cls="AnswerRecall"),
    MetricSpec("f1", "F1", "F1", "higher", "answer", compute=m.f1,
               checks=("answer2response", "response2answer"), aliases=("answer_f1",),
               ragchecker="f1", ragchecker_group="overall",
               ragchecker_zero=("response_claims", "reference_claims"), cls="AnswerF1"),
    MetricSpec("claim_recall", "claim recall", "claim rec.", "higher", "retrieval",
               compute=m.claim_recall, checks=("retrieved2answer",),
               aliases=("context_recall",), ragas="ContextRecall", ragchecker="claim_recall",
               ragchecker_group="retriever", ragchecker_zero=("reference_claims", "chunks"),
               cls="ContextRecall"),
    MetricSpec("context_precision", "context precision", "ctx prec.", "higher", "retrieval",
               compute=m.context_precision, checks=("retrieved2answer",),
               ragchecker="context_precision", ragchecker_group="retriever",
               ragchecker_zero=("reference_claims", "chunks"), cls="ContextPrecision"),
    MetricSpec("context_utilization", "context utilization", "ctx util.", "higher",
               "retrieval", compute=m.context_utilization,
               checks=("retrieved2answer", "response2answer"),
               ragchecker="context_utilization", ragchecker_group="generator",
               ragchecker_zero=("covered",), cls="ContextUtilization"),
    MetricSpec("context_precision_ranked", "ranked context precision", "ranked CP", "higher",
               "retrieval", kind="extra", compute=context_precision_ranked,
               checks=("retrieved2answer",), aliases=("ranked_context_precision",),
               ragas="ContextPrecision", cls="RankedContextPrecision"),
    MetricSpec("answer_relevancy", "answer relevancy", "ans. rel.", "higher", "answer",
               kind="extra", ragas="ResponseRelevancy", cls="AnswerRelevancy"),
    MetricSpec("noise_misattribution", "misattributed noise", "misattr.", "lower",
               "diagnostic", kind="diagnostic", key=True),
)

_SPECS: dict[str, MetricSpec] = {s.name: s for s in _BUILT_IN}

#: The built-in family (RAGChecker's eleven), as named at import; ``family()`` also lists
#: metrics registered since.
METRIC_NAMES: tuple[str, ...] = tuple(s.name for s in _BUILT_IN if s.kind == "family")
#: The built-in family's checks (``spec(name).checks`` for any metric).
METRIC_CHECKS: Mapping[str, tuple[str, ...]] = {s.name: s.checks for s in _BUILT_IN
                                                if s.kind == "family"}


def register(new: MetricSpec) -> MetricSpec:
    """Add a metric; its name and aliases must be new."""
    taken = {n for s in _SPECS.values() for n in (s.name, *s.aliases)}
    clash = [n for n in (new.name, *new.aliases) if n in taken]
    if clash:
        raise ValueError(f"metric name already in the catalogue: {', '.join(clash)}")
    _SPECS[new.name] = new
    return new


def unregister(name: str) -> None:
    """Remove a metric added by ``register`` (the built-in ones stay)."""
    if any(s.name == name for s in _BUILT_IN):
        raise ValueError(f"{name!r} is built in")
    _SPECS.pop(name, None)


@contextmanager
def registered(new: MetricSpec) -> Iterator[MetricSpec]:
    """``register`` for the length of a ``with`` block."""
    register(new)
    try:
        yield new
    finally:
        unregister(new.name)


def all_specs() -> tuple[MetricSpec, ...]:
    """Every metric, in catalogue order (family, then extras and diagnostics as listed)."""
    return tuple(_SPECS.values())


def family() -> tuple[str, ...]:
    """The metrics computed for every sample (the results file's ``metrics`` keys)."""
    return names("family")


def diagnostics() -> tuple[str, ...]:
    return names("diagnostic")


def names(kind: Kind) -> tuple[str, ...]:
    """The metrics of one kind, in catalogue order."""
    return tuple(s.name for s in _SPECS.values() if s.kind == kind)


def spec(name: str) -> MetricSpec:
    """The spec of ``name`` or one of its aliases; KeyError when unknown."""
    found = _SPECS.get(canonical(name))
    if found is None:
        raise KeyError(name)
    return found


def canonical(name: str) -> str:
    """Our name for ``name`` (aliases accepted; case and spaces ignored); unknown names as given."""
    key = name.strip().lower()
    if key in _SPECS:
        return key
    return next((s.name for s in _SPECS.values() if key in s.aliases), key)


def label(name: str) -> str:
    s = _SPECS.get(name)
    return s.label if s else name


def short(name: str) -> str:
    s = _SPECS.get(name)
    return s.short if s else name


def lower_is_better(name: str) -> bool:
    s = _SPECS.get(name)
    return s is not None and s.direction == "lower"


def neutral(name: str) -> bool:
    """Neither direction is better in itself (self-knowledge)."""
    s = _SPECS.get(name)
    return s is not None and s.direction == "none"


def compute_metrics(cv: ClaimVerdicts, *, compat: Compat | None = None,
                    relevant: Sequence[bool] | None = None) -> dict[str, MetricValue]:
    """Every family metric for one sample, keyed by name; ``compat="ragchecker"`` for
    RAGChecker's values where a denominator is empty (see ``engine.metrics``).
    ``relevant``: which chunks are relevant, when known otherwise than from the judge (labels);
    by default a chunk is relevant iff it entails a reference claim."""
    check_compat(compat)
    judged = Judged(cv, None if relevant is None else tuple(bool(r) for r in relevant))
    out: dict[str, MetricValue] = {}
    for s in _SPECS.values():
        if s.kind == "family" and s.compute is not None:
            out[s.name] = s.compute(judged)
    return out if compat is None else _ragchecker_empties(cv, out)


_ZERO = MetricValue(0.0)
NAN_CLAIM_RECALL = ("RAGChecker gives NaN here: the mean of an empty slice (reference claims, "
                    "no chunks)")


def _ragchecker_empties(cv: ClaimVerdicts, out: dict[str, MetricValue]) -> dict[str, MetricValue]:
    """``out`` with each empty-denominator case replaced by RAGChecker's value for it."""
    empty: dict[Empty, bool] = {
        "response_claims": not cv.response_claims,
        "reference_claims": not cv.reference_claims,
        "chunks": cv.n_chunks == 0,
        "covered": not any(v is Verdict.ENTAILED for row in cv.retrieved2answer for v in row),
    }
    for name in out:
        s = _SPECS[name]
        if any(empty[e] for e in s.ragchecker_zero):
            out[name] = _ZERO
        elif any(empty[e] for e in s.ragchecker_nan):
            out[name] = MetricValue(None, NAN_CLAIM_RECALL)
    return out
