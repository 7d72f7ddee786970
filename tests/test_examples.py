"""The bundled example data (examples/support_bot.jsonl) is valid and labelled consistently.

The labels are the authors' intent, not a judge's output; these tests check that the file parses,
covers every scenario, and that each sentence's intended bucket agrees with the chunks it cites
(RAGChecker algebra: a chunk is relevant iff it entails a reference claim).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from noisegauge import Sample
from noisegauge.textkit.sentences import sentences

DATA = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"
SCENARIOS = {"refusal", "clean", "relevant_noise", "irrelevant_noise", "hallucination", "self_knowledge",
             "mixed_up_entities"}
BUCKETS = {"grounded", "relevant_noise", "irrelevant_noise", "hallucination", "self_knowledge"}
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# A noise sentence is meant to be copied from its chunk "in nearly the same words".
MIN_COPY_OVERLAP = 0.8


def _records() -> list[dict[str, Any]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


RECORDS = _records()


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _overlap(sentence: str, chunk: str) -> float:
    words = _tokens(sentence)
    return len(words & _tokens(chunk)) / len(words)


def _ids(records: list[dict[str, Any]]) -> list[str]:
    return [str(r.get("id")) for r in records]


@pytest.mark.parametrize("row", range(len(RECORDS)), ids=_ids(RECORDS))
def test_row_parses_as_sample(row: int) -> None:
    sample = Sample.from_record(RECORDS[row], row=row)
    assert sample.id and sample.response.strip()
    assert sample.metadata["scenario"] in SCENARIOS
    assert sample.metadata["note"].strip()


def test_dataset_shape() -> None:
    ids = _ids(RECORDS)
    assert len(RECORDS) >= 20
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    scenarios = Counter(r["metadata"]["scenario"] for r in RECORDS)
    assert set(scenarios) == SCENARIOS
    minimum = {"clean": 5, "relevant_noise": 5, "irrelevant_noise": 5, "hallucination": 4,
               "self_knowledge": 1, "mixed_up_entities": 2}
    assert all(scenarios[s] >= n for s, n in minimum.items()), scenarios


def test_korean_samples_cover_the_noise_scenarios() -> None:
    korean = [r for r in RECORDS if HANGUL.search(r["user_input"] + r["response"])]
    assert len(korean) >= 4
    assert {"clean", "relevant_noise", "irrelevant_noise"} <= {
        r["metadata"]["scenario"] for r in korean}
    assert all(r["metadata"]["lang"] == "ko" for r in korean)


def test_edge_cases_present() -> None:
    assert any(r["retrieved_contexts"] == [] for r in RECORDS)
    assert any(r["response"] == "I don't have information about that." for r in RECORDS)
    for r in RECORDS:
        n = len(r["retrieved_contexts"])
        assert n == 0 or 2 <= n <= 5, (r["id"], n)


@pytest.mark.parametrize("row", range(len(RECORDS)), ids=_ids(RECORDS))
def test_buckets_match_sentences_and_cited_chunks(row: int) -> None:
    r = RECORDS[row]
    meta, chunks = r["metadata"], r["retrieved_contexts"]
    said = sentences(r["response"])
    buckets, support = meta["expected_buckets"], meta["expected_support"]
    if meta["scenario"] == "refusal":  # a refusal states nothing: no claims, no buckets
        assert buckets == support == [] and meta.get("refusal") is True
        return
    relevant = set(meta["relevant_chunks"])
    assert len(buckets) == len(said) == len(support), said
    assert set(buckets) <= BUCKETS
    assert relevant <= set(range(len(chunks)))
    for sentence, bucket, cited in zip(said, buckets, support, strict=True):
        assert set(cited) <= set(range(len(chunks))), (sentence, cited)
        if bucket in ("hallucination", "self_knowledge"):
            assert cited == [], sentence
        elif bucket in ("grounded", "relevant_noise"):
            assert set(cited) & relevant, sentence
        else:  # irrelevant noise: entailed only by chunks outside the relevant set
            assert cited and not set(cited) & relevant, sentence
        if bucket.endswith("_noise"):
            best = max(_overlap(sentence, chunks[j]) for j in cited)
            assert best >= MIN_COPY_OVERLAP, (sentence, best)
        if bucket not in ("grounded", "self_knowledge"):
            # wrong in a checkable way: some word (number, plan, SKU...) is not in the reference
            assert _tokens(sentence) - _tokens(r["reference"]), sentence
        if bucket == "hallucination":
            assert all(_tokens(sentence) - _tokens(c) for c in chunks), sentence


@pytest.mark.parametrize("row", range(len(RECORDS)), ids=_ids(RECORDS))
def test_scenario_agrees_with_buckets(row: int) -> None:
    meta = RECORDS[row]["metadata"]
    scenario, buckets = meta["scenario"], set(meta["expected_buckets"])
    if scenario == "refusal":
        assert buckets == set()
    elif scenario == "clean":
        assert buckets == {"grounded"}
    elif scenario == "mixed_up_entities":
        # exact algebra: the borrowed chunk does not entail a claim about another plan
        assert "hallucination" in buckets and meta["borrowed_from"]
        assert not set(meta["borrowed_from"]) & set(meta["relevant_chunks"])
    else:
        assert scenario in buckets
