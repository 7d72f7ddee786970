"""Metric objects: small, frozen, async first, with one sync bridge.

Every metric runs the same judged pass and reads its own number from it, so asking a
sample for several metrics (or both noise modes) costs the judge calls of one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, cast

from .._async import run_sync
from ..engine import catalogue
from ..engine.metrics import Compat, Judged, MetricValue, check_compat
from ..engine.ranked import RANKED_CONTEXT_PRECISION
from ..errors import InvalidSample
from ..io.ragas import is_sample_like, sample_record
from ..judges.adapt import as_judge
from ..judges.base import Judge, metered
from ..judges.registry import get_judge
from ..samples import Sample
from .asking import QuestionRequest, RelevancyMeasure, with_relevancy
from .failures import describe_failure, failure_kind
from .judging import judge_sample
from .labels import RelevanceMode, check_relevance, decide, with_sources
from .results import MetricResult, SampleResult, Status, error_result, result_from_verdicts
from .sources import ask_sources

__all__ = ["Metric", "NoiseSensitivity", "Faithfulness", "Hallucination", "SelfKnowledge",
           "ContextPrecision", "ContextRecall", "ContextUtilization", "AnswerPrecision",
           "AnswerRecall", "AnswerF1", "RankedContextPrecision", "ascore_sample", "score_sample",
           "as_sample", "metric_for"]


def as_sample(sample: Sample | Mapping[str, Any] | Any, fields: Mapping[str, Any],
              row: int | None = None) -> Sample:
    """Accept a Sample, a record dict, a Ragas ``SingleTurnSample``, or keyword fields
    (``user_input=...``)."""
    if isinstance(sample, Sample):
        if fields:
            raise TypeError("pass either a Sample or keyword fields, not both")
        return sample
    if is_sample_like(sample):
        sample = sample_record(sample)
    record = dict(sample or {})
    record.update(fields)
    return Sample.from_record(record, row=row)


async def ascore_sample(sample: Sample, judge: Judge | str, *, index: int | None = None,
                        compat: Compat | None = None,
                        relevancy: RelevancyMeasure | None = None,
                        relevance: RelevanceMode = "auto") -> SampleResult:
    """Judge one sample once and compute every metric from it. A judge failure (an
    unreachable endpoint, a timeout, an unusable answer) becomes an ``error`` result with the
    reason and its ``error_kind``; anything else is a bug and is raised.
    ``compat="ragchecker"``: RAGChecker's values where a denominator is empty (0.0) instead
    of undefined. ``relevancy``: also compute Answer Relevancy with that metric's settings
    (its questions come from the same pass). ``relevance``: which chunks count as relevant,
    from the row's labels or the judge (see ``scoring.labels``)."""
    check_compat(compat)
    resolved = get_judge(judge)
    try:
        chosen = decide(sample, check_relevance(relevance), index)
    except InvalidSample as exc:  # asked for labels the row lacks: this row, not the run
        return error_result(str(exc), index=index, id=sample.id, kind="input")
    with metered() as usage:
        request = None
        if relevancy is not None:
            request = QuestionRequest(relevancy.strictness)
        try:
            cv = await judge_sample(sample, resolved, questions=request)
            if relevancy is not None and request is not None:
                ar = await relevancy.measure(sample, cv.response_claims, request.asked)
        except Exception as exc:
            kind = failure_kind(exc)
            if kind is None:  # a bug (ours or a custom judge's) must not hide in a row
                raise
            return error_result(describe_failure(exc), index=index, id=sample.id, usage=usage,
                                kind=kind)
        result = result_from_verdicts(cv, index=index, id=sample.id, usage=usage,
                                      chunks=sample.retrieved_contexts, reference=sample.reference,
                                      question=_asked(sample), compat=compat,
                                      relevant=chosen.flags)
        if result.evidence is not None:
            result = replace(result, evidence=with_sources(result.evidence, cv, sample, chosen))
        if relevancy is not None:
            result = with_relevancy(result, *ar)
        return await ask_sources(resolved, sample, result)


def score_sample(sample: Sample, judge: Judge | str, *, index: int | None = None,
                 compat: Compat | None = None) -> SampleResult:
    """Synchronous ``ascore_sample``; raises inside a running event loop."""
    return run_sync(ascore_sample(sample, judge, index=index, compat=compat),
                    hint="use `await ascore_sample(...)`")


#: metric name -> the class computing it (each subclass with a ``metric`` adds itself).
_CLASSES: dict[str, type[Metric]] = {}


@functools.lru_cache(maxsize=1)
def default_judge() -> Judge:
    """The offline default judge, built once and shared by metrics made without one."""
    return get_judge("lexical")


@dataclass(frozen=True)
class Metric:
    """Base of every claim metric.

    ``judge`` and ``llm`` are two names of one optional parameter (``llm`` is Ragas'): a
    Judge, a spec string (``"openai:gpt-4o-mini"``), or an LLM client the user already holds
    (an OpenAI client with ``model=``, a LangChain chat model, a Ragas LLM wrapper). Without
    either, the offline default judge (``lexical``) is used. ``compat="ragchecker"`` gives
    RAGChecker's 0.0 where our default says undefined.
    """

    judge: Judge | str | None = None
    llm: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: The model to ask, for clients that do not name one (``openai.OpenAI()``).
    model: str | None = field(default=None, kw_only=True, repr=False)
    compat: Compat | None = field(default=None, kw_only=True)
    metric: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.metric:  # the class that computes this catalogue metric (metric_for)
            _CLASSES.setdefault(cls.metric, cls)

    def __post_init__(self) -> None:
        check_compat(self.compat)
        if self.judge is not None and self.llm is not None:
            raise TypeError(f"{type(self).__name__}: pass judge= or llm= (two names of one "
                            "parameter), not both")
        chosen = self.llm if self.llm is not None else self.judge
        if chosen is None:
            if self.model is not None:
                raise TypeError(f"{type(self).__name__}: model= names the model of an llm= "
                                "client; pass the client too")
            resolved = default_judge()
        else:
            resolved = as_judge(chosen, **({"model": self.model} if self.model else {}))
        object.__setattr__(self, "judge", resolved)
        object.__setattr__(self, "llm", resolved)

    @property
    def name(self) -> str:
        """The column this metric fills (``noise_sensitivity_relevant``, ...)."""
        return self.metric

    async def ascore(self, sample: Sample | Mapping[str, Any] | Any = None, /,
                     **fields: Any) -> MetricResult:
        """Score one sample: ``await m.ascore(user_input=..., response=..., reference=...,
        retrieved_contexts=[...])`` or ``await m.ascore(sample)``."""
        s = as_sample(sample, fields)
        result = await ascore_sample(s, cast(Judge, self.judge),  # resolved in __post_init__
                                     compat=self.compat, **self.score_options())
        return self.pick(result)

    def score_options(self) -> dict[str, Any]:
        """Extra work this metric asks of the judged pass (Answer Relevancy: questions)."""
        return {}

    def score(self, sample: Sample | Mapping[str, Any] | Any = None, /,
              **fields: Any) -> MetricResult:
        """Synchronous ``ascore``. Inside a running event loop it raises: use ``await``."""
        return run_sync(self.ascore(sample, **fields), hint="use `await scorer.ascore(...)`")

    async def single_turn_ascore(self, sample: Any) -> float | None:
        """Ragas' legacy call: the value for a ``SingleTurnSample`` (or dict); None where
        Ragas would give NaN (undefined or error; ``ascore`` says why)."""
        return (await self.ascore(sample)).value

    def single_turn_score(self, sample: Any) -> float | None:
        """Synchronous ``single_turn_ascore``."""
        return run_sync(self.single_turn_ascore(sample),
                        hint="use `await scorer.single_turn_ascore(...)`")

    async def multi_turn_ascore(self, sample: Any) -> float | None:
        """Ragas' call for a ``MultiTurnSample`` (or a dict whose ``user_input`` is a
        conversation): the value for its last turn, read with the turns before it."""
        return (await self.ascore(sample)).value

    def multi_turn_score(self, sample: Any) -> float | None:
        """Synchronous ``multi_turn_ascore``."""
        return run_sync(self.multi_turn_ascore(sample),
                        hint="use `await scorer.multi_turn_ascore(...)`")

    def pick(self, result: SampleResult) -> MetricResult:
        """This metric's value out of a judged pass (a metric outside the family is
        computed here from the pass's verdicts, by its catalogue function)."""
        mv = result.metrics.get(self.name)
        if mv is None and result.status != "error" and result.verdicts is not None:
            mv = _from_verdicts(self.name, result)
        value = None if mv is None else mv.value
        status: Status
        if result.status == "error":
            status, reason = "error", result.reason
        elif value is None:
            status, reason = "undefined", (mv.reason if mv else "not computed")
        else:
            status, reason = "ok", None
        return MetricResult(name=self.name, value=value, status=status, reason=reason,
                            sample=result)


@dataclass(frozen=True)
class NoiseSensitivity(Metric):
    """Share of response claims that are wrong *and* entailed by a relevant chunk
    (``mode="relevant"``) or only by irrelevant chunks (``mode="irrelevant"``). Lower is better.
    """

    mode: Literal["relevant", "irrelevant"] = "relevant"

    def __post_init__(self) -> None:
        if self.mode not in ("relevant", "irrelevant"):
            raise ValueError(f"mode must be 'relevant' or 'irrelevant', got {self.mode!r}")
        super().__post_init__()

    @property
    def name(self) -> str:
        return f"noise_sensitivity_{self.mode}"


@dataclass(frozen=True)
class Faithfulness(Metric):
    """Share of response claims entailed by at least one chunk. Higher is better."""
    metric: ClassVar[str] = "faithfulness"


@dataclass(frozen=True)
class Hallucination(Metric):
    """Share of response claims that are wrong and entailed by no chunk. Lower is better."""
    metric: ClassVar[str] = "hallucination"


@dataclass(frozen=True)
class SelfKnowledge(Metric):
    """Share of response claims that are correct but entailed by no chunk."""
    metric: ClassVar[str] = "self_knowledge"


@dataclass(frozen=True)
class ContextPrecision(Metric):
    """Share of chunks that entail at least one reference claim (RAGChecker's definition)."""
    metric: ClassVar[str] = "context_precision"


@dataclass(frozen=True)
class ContextRecall(Metric):
    """Claim recall: share of reference claims entailed by some chunk."""
    metric: ClassVar[str] = "claim_recall"


@dataclass(frozen=True)
class ContextUtilization(Metric):
    """Of the reference claims the chunks cover, the share the response states."""
    metric: ClassVar[str] = "context_utilization"


@dataclass(frozen=True)
class AnswerPrecision(Metric):
    """Share of response claims entailed by the reference (correctness)."""
    metric: ClassVar[str] = "precision"


@dataclass(frozen=True)
class AnswerRecall(Metric):
    """Share of reference claims entailed by the response (completeness)."""
    metric: ClassVar[str] = "recall"


@dataclass(frozen=True)
class AnswerF1(Metric):
    """Per-sample harmonic mean of answer precision and recall."""
    metric: ClassVar[str] = "f1"


@dataclass(frozen=True)
class RankedContextPrecision(Metric):
    """Ragas' rank-aware context precision: mean precision@k over the ranks holding a
    relevant chunk (relevance as in ``ContextPrecision``). Same judge work, no extra call."""
    metric: ClassVar[str] = RANKED_CONTEXT_PRECISION


def _from_verdicts(name: str, result: SampleResult) -> MetricValue | None:
    try:
        compute = catalogue.spec(name).compute
    except KeyError:  # a Metric subclass the catalogue does not know
        return None
    if compute is None or result.verdicts is None:
        return None
    ev = result.evidence  # chunks labelled relevant by people are relevant here too
    labelled = ev is not None and any(c.relevance_from == "labels" for c in ev.chunks)
    labels = tuple(c.relevant for c in ev.chunks) if labelled and ev is not None else None
    return compute(Judged(result.verdicts, labels))


def metric_for(name: str, judge: Judge | str | None = None) -> Metric:
    """The object computing the catalogue's metric ``name`` (an alias works too): its public
    class, or a plain ``Metric`` for one registered without a class."""
    spec = catalogue.spec(name)
    if spec.cls == NoiseSensitivity.__name__:
        mode = spec.name.removeprefix("noise_sensitivity_")
        return NoiseSensitivity(judge=judge, mode=mode)  # type: ignore[arg-type]
    cls = _CLASSES.get(spec.name)
    if cls is None:
        title = spec.cls or "".join(w.title() for w in spec.name.split("_"))
        cls = cast(type[Metric], type(title, (Metric,), {
            "metric": spec.name, "__module__": __name__, "__doc__": f"{spec.label} (catalogue)"}))
    return cls(judge=judge)


def _asked(sample: Sample) -> str:
    """What the user asked, for the misattribution hints (which read the question for the
    entity asked about): in a chat, the last user turns before the question too, since
    "Does it include phone support?" names nothing; a single turn's question alone."""
    earlier = [t.content for t in sample.history if t.role == "user"][-2:]
    return " ".join([*earlier, sample.user_input]) if earlier else sample.user_input
