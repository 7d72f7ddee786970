"""Pure parts of the LLM judge: tolerant parsing, call planning, prompts, pricing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batch_helpers import require_extra
from noisegauge import Verdict
from noisegauge.judges.llm.batching import STRATEGIES, plan
from noisegauge.judges.llm.output import load_json, read_claims, read_verdicts
from noisegauge.judges.llm.pricing import DEFAULT_PRICES, cost_usd, price_for
from noisegauge.judges.llm.prompts import (
    check_messages,
    check_schema,
    extract_messages,
    extract_schema,
)
from noisegauge.testing.fake_openai import FakeRequest, judge_responder

E, N, C = Verdict.ENTAILED, Verdict.NEUTRAL, Verdict.CONTRADICTED


# -- tolerant JSON --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"t1": ["a", "b"]}',
    '{"claims": ["a", "b"]}',
    '```json\n{"t1": ["a", "b"],}\n```',
    "Here you go: {'t1': ['a', 'b']} -- done",
    '<think>maybe {"t1": ["x"]}</think>{"t1": ["a", "b"]}',
    '["a", "b"]',
    '{"T1": [{"claim": "a"}, {"text": "b"}]}',
    '{"result": {"t1": ["a", "b"]}}',
])
def test_claims_survive_local_model_formatting(text):
    require_extra("openai")  # json-repair reads the malformed ones
    assert read_claims(text, ["t1"]) == {"t1": ["a", "b"]}


@pytest.mark.parametrize("text", ["I cannot help with that.", "", '{"answer": 42}',
                                  '{"t1": [1, 2]}', '{"t9": ["a"]}'])
def test_unusable_claim_answers_give_nothing(text):
    assert read_claims(text, ["t1"]) == {}


def test_several_texts_are_read_by_id_and_an_empty_list_is_a_real_answer():
    answer = '{"t2": ["b"], "t1": [], "t3": "oops"}'
    assert read_claims(answer, ["t1", "t2", "t3"]) == {"t1": [], "t2": ["b"]}
    # With several texts, a bare list cannot be attributed, so it is not.
    assert read_claims('["a"]', ["t1", "t2"]) == {}


PAIRS = {"p1": ["c1", "c2"], "p2": ["c1", "c2"]}
FULL = {("p1", "c1"): E, ("p1", "c2"): N, ("p2", "c1"): C, ("p2", "c2"): E}


@pytest.mark.parametrize("answer", [
    {"p1": {"c1": "entailed", "c2": "neutral"}, "p2": {"c1": "contradicted", "c2": "entailed"}},
    {"c1": {"p1": "Entailment", "p2": "Contradiction"}, "c2": {"p1": "Neutral", "p2": "supported"}},
    {"verdicts": {"P1": {"[c1]": "entailed", "c2": "neutral"},
                  "p2": {"c1": "contradicted", "c2": {"verdict": "entailed", "reason": "..."}}}},
    [{"premise": "p1", "claim": "c1", "verdict": "entailed"},
     {"premise": "p1", "claim": "c2", "verdict": "neutral"},
     {"premise": "p2", "claim": "c1", "label": "contradicted"},
     {"premise": "p2", "claim": "c2", "verdict": "entailed"}],
])
def test_verdict_shapes_models_drift_to_are_read_by_id(answer):
    assert read_verdicts(json.dumps(answer), PAIRS) == FULL


def test_unknown_ids_and_bad_values_count_as_missing():
    text = '{"p1": {"c1": "entailed", "c2": "maybe", "c9": "entailed"}, "p7": {"c1": "neutral"}}'
    assert read_verdicts(text, PAIRS) == {("p1", "c1"): E}


def test_truncated_answer_keeps_only_complete_verdicts():
    require_extra("openai")  # json-repair completes the cut-off object
    text = '{"p1": {"c1": "entailed", "c2": "neutral"}, "p2": {"c1": "contra'
    assert read_verdicts(text, PAIRS) == {("p1", "c1"): E, ("p1", "c2"): N}


def test_flat_answer_for_a_single_premise():
    assert read_verdicts('{"c1": "entailed", "c2": "neutral"}', {"p3": ["c1", "c2"]}) == {
        ("p3", "c1"): E, ("p3", "c2"): N}


def test_flat_premise_answers_are_read_when_each_premise_lists_one_claim():
    # What a 1.5B model answered in issue 11: unambiguous, since p1 lists c1 only.
    pairs = {"p1": ["c1"], "p2": ["c1"], "p3": ["c2"]}
    text = '{"p1": "contradicted", "p2": "entailed", "p3": "Neutral"}'
    assert read_verdicts(text, pairs) == {("p1", "c1"): C, ("p2", "c1"): E, ("p3", "c2"): N}
    # With two claims listed for p1, a bare verdict for p1 says nothing about either.
    assert read_verdicts('{"p1": "entailed"}', {"p1": ["c1", "c2"]}) == {}


def test_a_lone_claim_id_is_read_when_one_premise_lists_it():
    pairs = {"p1": ["c1"], "p2": ["c2", "c3"]}
    text = '{"c1": "entailed", "c2": "refuted", "c3": "not supported"}'
    assert read_verdicts(text, pairs) == {("p1", "c1"): E, ("p2", "c2"): C, ("p2", "c3"): N}
    # c1 listed for two premises: a flat c1 could be either, so it is not read.
    assert read_verdicts('{"c1": "entailed"}', {"p1": ["c1"], "p2": ["c1"]}) == {}


@pytest.mark.parametrize("answer", [
    {"p1": [{"claim": "c1", "verdict": "entailed"}, {"claim": "c2", "verdict": "neutral"}],
     "p2": [{"c1": "contradicted"}, {"c2": "entailed"}]},
    {"Premise 1": {"claim 1": "Supports", "Claim_2": "NOT ENOUGH INFO"},
     "premise-2": {"c1: The claim's text": "Refutes", "[c2]": "entailment"}},
    {"notes": "checked carefully", "result": [
        {"premise_id": "p1", "claim_id": "c1", "label": "supported"},
        {"premise_id": "p1", "claim_id": "c2", "label": "unrelated"},
        {"premise_id": "p2", "claim_id": "c1", "label": "contradiction"},
        {"premise_id": "p2", "claim_id": "c2", "label": "entails"}]},
])
def test_record_lists_spelled_ids_and_synonyms_are_read(answer):
    assert read_verdicts(json.dumps(answer), PAIRS) == FULL


@pytest.mark.parametrize("text", [
    '{"p1": ["entailed", "neutral"], "p2": ["contradicted", "entailed"]}',  # positional
    '{"p1": {"c1": "partially supported", "c2": "maybe"}}',                 # not a verdict
    '{"1": {"1": "entailed"}}',                                             # bare numbers
])
def test_answers_that_need_a_guess_give_nothing(text):
    assert read_verdicts(text, PAIRS) == {}


def test_two_different_verdicts_for_one_cell_are_dropped_not_picked():
    text = ('[{"premise": "p1", "claim": "c1", "verdict": "entailed"}, '
            '{"premise": "p1", "claim": "c1", "verdict": "contradicted"}, '
            '{"premise": "p1", "claim": "c2", "verdict": "neutral"}, '
            '{"premise": "p1", "claim": "c2", "verdict": "neutral"}]')
    assert read_verdicts(text, PAIRS) == {("p1", "c2"): N}


def test_plain_text_answers_of_a_real_small_model_are_read():
    pytest.importorskip("json_repair", reason="pip install -e '.[openai]' (json-repair)")
    # Qwen2.5-Coder 0.5B/1.5B behind llama-cpp-python, no response_format: chatter or a
    # chain of thought, then the JSON (recorded answers, shortened).
    chatter = ('Mark the id of each claim:\nc1: "The Pro plan costs $20 per month."\n'
               '{"verdicts":[{"id":"c1","verdict":"entailed"}]}')
    assert read_verdicts(chatter, {"p1": ["c1"]}) == {("p1", "c1"): E}
    thought = ("Let's analyze this step by step:\n\n1. The premise states the Pro plan costs "
               '$20/month.\n\nBased on the analysis:\n\n{"p1": {"c1": "entailed", "c2": '
               '"not supported"}}')
    assert read_verdicts(thought, {"p1": ["c1", "c2"]}) == {("p1", "c1"): E, ("p1", "c2"): N}


def test_load_json_gives_none_for_prose():
    assert load_json("no json here") is None


# -- planning -------------------------------------------------------------------------------

sizes = st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(strategy=st.sampled_from(STRATEGIES), premises=sizes, claims=sizes,
       budget=st.integers(min_value=50, max_value=8000), cells=st.integers(min_value=1, max_value=50),
       k=st.integers(min_value=1, max_value=6), data=st.data())
def test_every_needed_pair_is_planned_exactly_once_within_limits(strategy, premises, claims, budget,
                                                                cells, k, data):
    needs = [sorted(data.draw(st.sets(st.integers(0, len(claims) - 1)))) for _ in premises]
    jobs = plan(strategy, premises, claims, needs, group_size=k, max_prompt_tokens=budget,
                max_cells=cells)
    planned = [(p, c) for job in jobs for p, cs in job.pairs for c in cs]
    assert sorted(planned) == sorted((p, c) for p, cs in enumerate(needs) for c in cs)
    for job in jobs:
        assert len(set(job.premises)) == len(job.premises)
        if strategy != "joint":
            assert len(job.pairs) == 1
        if strategy == "per_claim_group":
            assert job.cells <= k
        if len(job.pairs) > 1:  # units are packed together only within the limits
            assert job.cells <= cells
            assert sum(premises[p] for p in job.premises) + sum(
                claims[c] for c in job.claims) <= budget


def test_joint_is_one_call_for_a_typical_sample():
    # reference, response, 4 chunks; 3 response and 3 reference claims
    needs = [[0, 1, 2], [3, 4, 5]] + [list(range(6))] * 4
    assert len(plan("joint", [60, 40, 35, 35, 40, 30], [25, 20, 15] * 2, needs)) == 1


# -- prompts and schema ---------------------------------------------------------------------

def test_check_prompt_keeps_each_claim_on_one_line_with_its_id():
    messages = check_messages({"p1": "Text one.\nMore."}, {"c1": "multi\nline  claim", "c2": "b"},
                              {"p1": ["c1", "c2"]})
    user = messages[1]["content"]
    assert "c1: multi line claim\nc2: b" in user and "<p1>\nText one.\nMore.\n</p1>" in user
    assert user.endswith("Judge:\np1: c1 c2")
    assert "JSON" in messages[0]["content"]  # JSON mode requires the word in the prompt


def test_schema_requires_exactly_the_pairs_asked_for():
    schema = check_schema({"p1": ["c2", "c3"], "p4": ["c1"], "p5": ["c2", "c3"]})
    assert schema["required"] == ["p1", "p4", "p5"] and schema["additionalProperties"] is False
    defs = schema["$defs"]
    rows = {p: defs[ref["$ref"].rsplit("/", 1)[1]] for p, ref in schema["properties"].items()}
    assert rows["p1"] is rows["p5"]  # identical claim sets share one definition
    assert rows["p1"]["required"] == ["c2", "c3"] and rows["p4"]["required"] == ["c1"]
    assert all(r["additionalProperties"] is False for r in rows.values())
    assert defs["verdict"]["enum"] == ["entailed", "neutral", "contradicted"]
    assert extract_schema(["t1", "t2"])["required"] == ["t1", "t2"]


def test_fake_responder_reads_the_prompts_the_judge_writes():
    messages = check_messages({"p1": "Paris is in France.", "p2": "Rome is in Italy."},
                              {"c1": "Paris is in France", "c2": "Rome is in Spain"},
                              {"p1": ["c1", "c2"], "p2": ["c2"]})
    respond = judge_responder()
    answer = json.loads(respond(FakeRequest(0, "/v1/chat/completions",
                                            {"messages": messages}, {}), 0))
    assert answer == {"p1": {"c1": "entailed", "c2": "neutral"}, "p2": {"c2": "neutral"}}
    claims = json.loads(respond(FakeRequest(0, "/", {"messages": extract_messages(
        {"t1": "One. Two.", "t2": "Three."}, "q")}, {}), 0))
    assert claims == {"t1": ["One.", "Two."], "t2": ["Three."]}


# -- pricing --------------------------------------------------------------------------------

def test_prices_are_per_million_tokens_and_user_table_wins():
    assert cost_usd("gpt-4o", 2_000_000, 1_000_000) == pytest.approx(2 * 2.50 + 10.00)
    assert cost_usd("gpt-4o", 1000, 0, prices={"gpt-4o": (1.0, 1.0)}) == pytest.approx(0.001)


def test_snapshots_find_their_base_model_but_other_variants_do_not():
    assert price_for("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-audio-preview") is None
    assert cost_usd("llama3.1:8b", 10, 10) is None
