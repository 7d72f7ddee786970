"""Reading samples from the three naming schemes, and errors that name row, field and fix."""

from __future__ import annotations

import pytest

from noisegauge import InvalidSample, Sample
from noisegauge.samples import MAX_CHUNK_CHARS

RAGAS = {"user_input": "q", "response": "a", "reference": "r", "retrieved_contexts": ["c1", "c2"]}


def test_three_naming_schemes_give_the_same_sample() -> None:
    old = {"question": "q", "answer": "a", "ground_truth": "r", "contexts": ["c1", "c2"]}
    rc = {"query": "q", "response": "a", "gt_answer": "r",
          "retrieved_context": [{"doc_id": "d1", "text": "c1"}, {"doc_id": "d2", "text": "c2"}]}
    a, b, c = (Sample.from_record(x, row=i) for i, x in enumerate((RAGAS, old, rc)))
    assert (a.user_input, a.response, a.reference, a.retrieved_contexts) == \
           (b.user_input, b.response, b.reference, b.retrieved_contexts) == \
           (c.user_input, c.response, c.reference, c.retrieved_contexts)
    assert c.chunk_ids == ("d1", "d2") and a.chunk_ids is None


@pytest.mark.parametrize(("patch", "field", "words"), [
    ({"user_input": None}, "user_input", "missing"),
    ({"reference": "  "}, "reference", "empty"),
    ({"retrieved_contexts": "just one string"}, "retrieved_contexts", "list of strings"),
    ({"retrieved_contexts": ["ok", 3]}, "retrieved_contexts", "item 1"),
    ({"response": 42}, "response", "type int"),
    ({"retrieved_contexts": ["x" * (MAX_CHUNK_CHARS + 1)]}, "retrieved_contexts", "characters"),
])
def test_bad_rows_name_row_field_and_expectation(patch: dict, field: str, words: str) -> None:
    record = {**RAGAS, **patch}
    if patch.get("user_input", "") is None:
        del record["user_input"]
    with pytest.raises(InvalidSample) as info:
        Sample.from_record(record, row=7)
    err = info.value
    assert err.row == 7 and err.field == field
    assert "row 7" in str(err) and field in str(err) and words in str(err)
    assert isinstance(err, ValueError)  # callers can catch the familiar type


def test_empty_response_and_empty_contexts_are_allowed() -> None:
    s = Sample.from_record({**RAGAS, "response": "", "retrieved_contexts": []})
    assert s.response == "" and s.retrieved_contexts == ()


def test_direct_construction_validates_too() -> None:
    with pytest.raises(InvalidSample, match="reference"):
        Sample(user_input="q", response="a", reference="", retrieved_contexts=())


def test_ragchecker_precomputed_triplets_and_labels() -> None:
    record = {**RAGAS, "response_claims": [["LIC", "is", "largest insurer"]],
              "gt_answer_claims": ["LIC is the largest insurer"],
              "answer2response": ["Entailment"], "response2answer": ["Neutral"],
              "retrieved2response": [["Entailment", "Contradiction"]],
              "retrieved2answer": [["Neutral", "Entailment"]]}
    s = Sample.from_record(record)
    assert s.precomputed is not None
    assert s.precomputed.response_claims == ("LIC is largest insurer",)
    assert s.precomputed.retrieved2response[0][1].value == "contradicted"


def test_inconsistent_precomputed_shapes_are_reported() -> None:
    record = {**RAGAS, "response_claims": ["a"], "gt_answer_claims": ["g"],
              "answer2response": ["Entailment"], "response2answer": ["Neutral"],
              "retrieved2response": [["Entailment"]],  # one chunk verdict, but two chunks
              "retrieved2answer": [["Neutral", "Entailment"]]}
    with pytest.raises(InvalidSample, match="retrieved2response"):
        Sample.from_record(record, row=3)


def test_extra_fields_become_metadata() -> None:
    s = Sample.from_record({**RAGAS, "tenant": "acme"})
    assert s.metadata == {"tenant": "acme"}


def test_every_missing_field_and_unknown_key_in_one_message_with_the_closest_name() -> None:
    rec = {"qestion": "q", "ans": "a", "refrence": "r", "contexts": [], "team": "billing"}
    with pytest.raises(InvalidSample) as info:
        Sample.from_record(rec, row=3)
    msg = str(info.value)
    assert msg.startswith("row 3, field 'user_input, response, reference': are missing: "
                          "'user_input' (accepted: user_input, question, query)")
    assert "'ans': did you mean 'response' (or 'answer')?" in msg
    assert "'qestion': did you mean 'user_input' (or 'question')?" in msg
    assert "'refrence': did you mean 'reference'?" in msg
    assert "'team'" in msg and "'team':" not in msg  # named, with no guess
    # a complete row keeps unknown keys as metadata: nothing to report
    ok = Sample.from_record({"question": "q", "answer": "a", "ground_truth": "r", "contexts": [],
                             "team": "billing"})
    assert ok.metadata == {"team": "billing"}
