"""``compat="ragchecker"`` reproduces RAGChecker's computation.py in every case, empty ones included.

``RC`` below is a transcription of RAGChecker's ``ragchecker/computation.py`` (amazon-science/
RAGChecker, Apache-2.0): the same numpy operations and the same branch conditions, applied to
its JSON shapes (label strings, lists of lists). Hypothesis generates verdict matrices of every
size from 0 up, and our engine must give RAGChecker's value exactly (``==``, not approx).
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from batch_helpers import RAGCHECKER_OUTPUTS
from noisegauge import ClaimVerdicts, NoiseSensitivity, compute_metrics, evaluate
from noisegauge.cli.main import cli
from noisegauge.engine.catalogue import METRIC_NAMES
from noisegauge.errors import InvalidInput
from noisegauge.io import RAGCHECKER_NAMES

LABELS = ["Entailment", "Neutral", "Contradiction"]


# --- the transcription ------------------------------------------------------------------

def _to_bool(x: Any) -> Any:
    if isinstance(x, str):
        return x == "Entailment"
    return np.array([_to_bool(v) for v in x])


def rc_metrics(rec: dict[str, Any]) -> dict[str, float]:
    """RAGChecker's per-example metrics for one record, under its metric names.

    One block per ``evaluate_*`` function of computation.py (commit 6091f08), each with that
    function's guard exactly as written there; the early returns for a metric already present
    are left out (a record here never carries one).
    """
    m: dict[str, float] = {}
    a2r, r2a = _to_bool(rec["answer2response"]), _to_bool(rec["response2answer"])
    ret2r, ret2a = _to_bool(rec["retrieved2response"]), _to_bool(rec["retrieved2answer"])
    # evaluate_precision
    m["precision"] = np.mean(a2r) if len(a2r) > 0 else 0.0
    # evaluate_recall
    m["recall"] = np.mean(r2a) if len(r2a) > 0 else 0.0
    # evaluate_f1
    p, r = m["precision"], m["recall"]
    m["f1"] = 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0
    # evaluate_retrieval (claim_recall, context_precision)
    if len(ret2a) > 0 and len(ret2a[0]) > 0:
        m["claim_recall"] = np.mean(np.max(ret2a, axis=1))
        m["context_precision"] = np.mean(np.max(ret2a, axis=0))
    else:
        m["claim_recall"] = m["context_precision"] = 0.0
    # evaluate_context_utilization
    if len(ret2a) > 0 and len(ret2a[0]) > 0:
        recalled = np.max(ret2a, axis=1)
        if np.sum(recalled) > 0:
            m["context_utilization"] = np.sum(recalled & r2a) / np.sum(recalled)
        else:
            m["context_utilization"] = 0.0
    else:
        m["context_utilization"] = 0.0
    # evaluate_noise_sensitivity
    if len(a2r) > 0 and len(ret2r[0]) > 0 and len(ret2a) > 0:
        relevant = np.max(ret2a, axis=0, keepdims=True)
        rel_faithful = np.max(relevant & ret2r, axis=1)
        irrelevant = ~np.max(ret2a, axis=0, keepdims=True)
        irr_faithful = np.max(irrelevant & ret2r, axis=1)
        irr_faithful &= ~rel_faithful
        m["noise_sensitivity_in_relevant"] = np.mean(rel_faithful & ~a2r)
        m["noise_sensitivity_in_irrelevant"] = np.mean(irr_faithful & ~a2r)
    else:
        m["noise_sensitivity_in_relevant"] = m["noise_sensitivity_in_irrelevant"] = 0.0
    # evaluate_unfaithfulness (hallucination, self_knowledge)
    if len(a2r) > 0 and len(ret2r[0]) > 0:
        unfaithful = ~np.max(ret2r, axis=1)
        m["hallucination"] = np.mean(unfaithful & ~a2r)
        m["self_knowledge"] = np.mean(unfaithful & a2r)
    else:
        m["hallucination"] = m["self_knowledge"] = 0.0
    # evaluate_faithfulness
    if len(ret2r) > 0 and len(ret2r[0]) > 0:
        m["faithfulness"] = np.mean(np.max(ret2r, axis=1))
    else:
        m["faithfulness"] = 0.0
    return {k: float(v) for k, v in m.items()}


# --- generated matrices -------------------------------------------------------------------

@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """A RAGChecker record with R response claims, G reference claims and n chunks (0 allowed)."""
    r, g, n = (draw(st.integers(0, 4)) for _ in range(3))
    label = st.sampled_from(LABELS)
    return {
        "response_claims": [f"r{i}" for i in range(r)],
        "gt_answer_claims": [f"g{i}" for i in range(g)],
        "answer2response": draw(st.lists(label, min_size=r, max_size=r)),
        "response2answer": draw(st.lists(label, min_size=g, max_size=g)),
        "retrieved2response": [draw(st.lists(label, min_size=n, max_size=n)) for _ in range(r)],
        "retrieved2answer": [draw(st.lists(label, min_size=n, max_size=n)) for _ in range(g)],
        "n": n,
    }


def _verdicts(rec: dict[str, Any]) -> ClaimVerdicts:
    return ClaimVerdicts.build(
        response_claims=rec["response_claims"], reference_claims=rec["gt_answer_claims"],
        answer2response=rec["answer2response"], response2answer=rec["response2answer"],
        retrieved2response=rec["retrieved2response"], retrieved2answer=rec["retrieved2answer"],
        n_chunks=rec["n"])


def _rc(rec: dict[str, Any]) -> dict[str, float]:
    # Its guards keep every mean off an empty slice: a numpy warning here is a transcription bug.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return rc_metrics(rec)


@settings(max_examples=250, deadline=None)
@given(records())
def test_compat_equals_ragcheckers_computation_on_every_matrix(rec: dict[str, Any]) -> None:
    ours = compute_metrics(_verdicts(rec), compat="ragchecker")
    theirs = _rc(rec)
    for name in METRIC_NAMES:
        assert ours[name].value == theirs[RAGCHECKER_NAMES[name]], (name, rec)


@settings(max_examples=150, deadline=None)
@given(records())
def test_default_differs_from_ragchecker_only_where_a_denominator_is_empty(
        rec: dict[str, Any]) -> None:
    """The deviation table in the README, as a property."""
    cv = _verdicts(rec)
    default, compat = compute_metrics(cv), compute_metrics(cv, compat="ragchecker")
    r, g, n = len(cv.response_claims), len(cv.reference_claims), cv.n_chunks
    covered = any(v.value == "entailed" for row in cv.retrieved2answer for v in row)
    may_differ = {
        "precision": r == 0, "recall": g == 0, "f1": r == 0 or g == 0,
        "claim_recall": g == 0, "context_precision": g == 0 or n == 0,
        "context_utilization": not covered,
        "noise_sensitivity_relevant": r == 0 or g == 0 or n == 0,
        "noise_sensitivity_irrelevant": r == 0 or g == 0 or n == 0,
        "hallucination": r == 0 or n == 0, "self_knowledge": r == 0 or n == 0,
        "faithfulness": r == 0 or n == 0,
    }
    for name in METRIC_NAMES:
        if not may_differ[name]:
            assert default[name] == compat[name], name
        if default[name].value is None and compat[name].value is not None:
            assert compat[name].value == 0.0  # RAGChecker's only stand-in for undefined


def _first_stored_example_without_chunks() -> dict[str, Any]:
    rec = dict(json.loads(RAGCHECKER_OUTPUTS.read_text())["results"][0])
    rec["retrieved_context"] = []
    rec["retrieved2response"] = [[] for _ in rec["response_claims"]]
    rec["retrieved2answer"] = [[] for _ in rec["gt_answer_claims"]]
    del rec["metrics"]
    return rec


def test_empty_retrieved_context_gives_ragcheckers_zeros_only_on_demand() -> None:
    rec = _first_stored_example_without_chunks()
    default = evaluate([rec], judge="precomputed", progress=False).results[0]
    compat = evaluate([rec], judge="precomputed", progress=False, compat="ragchecker").results[0]
    assert default.value("hallucination") == pytest.approx(0.27, abs=0.01)
    assert default.value("self_knowledge") == pytest.approx(0.73, abs=0.01)
    assert default.value("context_precision") is None
    assert compat.value("hallucination") == 0.0 and compat.value("self_knowledge") == 0.0
    assert compat.value("context_precision") == 0.0
    # evaluate_retrieval's guard (len(retrieved2answer[0]) > 0) writes 0.0, not a NaN mean
    assert compat.value("claim_recall") == 0.0 and default.value("claim_recall") == 0.0
    theirs = _rc({**rec, "n": 0})
    for name in METRIC_NAMES:
        assert compat.value(name) == theirs[RAGCHECKER_NAMES[name]], name


def test_stored_examples_agree_in_both_modes() -> None:
    default = evaluate(RAGCHECKER_OUTPUTS, judge="precomputed", progress=False)
    compat = evaluate(RAGCHECKER_OUTPUTS, judge="precomputed", progress=False,
                      compat="ragchecker")
    assert [r.to_row() for r in compat.results] == [r.to_row() for r in default.results]


def test_compat_on_metric_objects_cli_and_bad_values(tmp_path: Any) -> None:
    rec = _first_stored_example_without_chunks()
    fields = {"user_input": rec["query"], "response": "", "reference": rec["gt_answer"],
              "retrieved_contexts": []}
    assert NoiseSensitivity(judge="lexical").score(**fields).value is None
    assert NoiseSensitivity(judge="lexical", compat="ragchecker").score(**fields).value == 0.0
    with pytest.raises(InvalidInput, match="ragchecker"):
        NoiseSensitivity(judge="lexical", compat="ragas")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="different compat modes"):
        evaluate([fields], metrics=[NoiseSensitivity(judge="lexical", compat="ragchecker"),
                                    NoiseSensitivity(judge="lexical", mode="irrelevant")],
                 progress=False)

    src = tmp_path / "in.json"
    src.write_text(json.dumps({"results": [rec]}))
    out = tmp_path / "out.json"
    res = CliRunner().invoke(cli, ["score", str(src), "--judge", "precomputed", "--compat",
                                   "ragchecker", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert written["results"][0]["metrics"]["hallucination"] == 0.0
    assert written["results"][0]["metrics"]["claim_recall"] == 0.0
    assert written["results"][0]["metrics"]["context_precision"] == 0.0
    assert written["metrics"]["generator"]["self_knowledge"] == 0.0
    res = CliRunner().invoke(cli, ["score", str(src), "--compat", "ragas"])
    assert res.exit_code == 2 and "ragchecker" in res.output
