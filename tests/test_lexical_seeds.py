"""The seeds' own examples come out right with the default (offline) judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noisegauge import Sample, score_sample
from noisegauge.judges.lexical import LexicalJudge

DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"


@pytest.fixture(scope="module")
def judge() -> LexicalJudge:
    return LexicalJudge()


def test_ragas_lic_example_with_the_offline_judge(judge: LexicalJudge) -> None:
    """Ragas' worked example: one of three claims is wrong and comes from a retrieved chunk.
    Ragas' LLM judge reads "LIC" as "Life Insurance Corporation of India" and finds that
    chunk relevant (1/3 relevant, 0 irrelevant); the offline judge reads them apart since
    judge 4.13 (the alias rule gained nothing on held-out data), so the chunk that says "LIC
    ... financial stability" entails no reference claim and the claim is irrelevant noise."""
    lic = json.loads((DATA / "ragas_lic.json").read_text(encoding="utf-8"))
    fields = ("user_input", "response", "reference", "retrieved_contexts")
    result = score_sample(Sample.from_record({k: lic[k] for k in fields}, 0), judge)
    assert len(result.verdicts.response_claims) == 3 if result.verdicts else False
    assert result.value("noise_sensitivity_relevant") == pytest.approx(0.0)
    assert result.value("noise_sensitivity_irrelevant") == pytest.approx(1 / 3)
    assert lic["expected"] == {"mode_relevant": pytest.approx(1 / 3), "mode_irrelevant": 0.0}
    # The mode hangs on chunk 2 ("LIC manages substantial funds ..."), which the offline judge
    # finds entails no reference claim: the claim says so, naming the chunk and the claim.
    assert result.evidence is not None
    doubts = [c.paraphrase_doubt for c in result.evidence.response_claims]
    assert doubts[:2] == [None, None]
    assert doubts[2] is not None and doubts[2][0] == 2


def test_paraphrase_doubt_is_not_raised_for_look_alike_values(judge: LexicalJudge) -> None:
    """A chunk that states another value ("2 business days" against "5") or names another
    entity ("Enterprise" when Team is asked) is noise for a reason words can see: no doubt."""
    flagged = noise = 0
    for row, line in enumerate(EXAMPLES.read_text(encoding="utf-8").splitlines()):
        result = score_sample(Sample.from_record(json.loads(line), row), judge)
        for c in result.evidence.response_claims if result.evidence else ():
            noise += c.bucket == "irrelevant_noise"
            flagged += c.paraphrase_doubt is not None
    assert noise >= 5
    assert flagged == 0


def test_the_summary_names_the_llm_judge_for_a_paraphrase_doubt(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from noisegauge.cli.main import cli

    lic = json.loads((DATA / "ragas_lic.json").read_text(encoding="utf-8"))
    src = tmp_path / "lic.jsonl"
    fields = ("user_input", "response", "reference", "retrieved_contexts")
    src.write_text(json.dumps({k: lic[k] for k in fields}) + "\n", encoding="utf-8")
    out = tmp_path / "r.jsonl"
    res = CliRunner().invoke(cli, ["score", str(src), "--out", str(out), "--no-cache"])
    assert res.exit_code == 0, res.output
    assert "may be relevant noise" in res.output and "--judge openai:MODEL" in res.output
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["response_claims"][2]["paraphrase_doubt"][0] == 2
    assert row["response_claims"][0]["paraphrase_doubt"] is None


def test_seed_article_pro_enterprise_answer_is_not_clean(judge: LexicalJudge) -> None:
    """The article's answer takes the 90-day notice and the form from the Enterprise chunk."""
    sample = Sample.from_record({
        "user_input": "What is the cancellation policy for the Pro plan?",
        "response": "The Pro plan can be cancelled anytime, but requires a 90-day notice period "
                    "and a signed offboarding form.",
        "retrieved_contexts": [
            "Pro plan subscriptions can be cancelled anytime with a 30-day notice period.",
            "Enterprise plan subscriptions require a 90-day notice period and a signed "
            "offboarding form."],
        "reference": "Pro plan subscriptions can be cancelled anytime with a 30-day notice period.",
    }, 0)
    result = score_sample(sample, judge)
    assert result.evidence is not None
    buckets = [c.bucket for c in result.evidence.response_claims]
    assert set(buckets) != {"grounded"}
    assert (result.value("precision") or 0.0) < 1.0


def test_support_bot_examples_keep_their_intended_buckets(judge: LexicalJudge) -> None:
    agree = total = 0
    for row, line in enumerate(EXAMPLES.read_text(encoding="utf-8").splitlines()):
        rec = json.loads(line)
        result = score_sample(Sample.from_record(rec, row), judge)
        got = [c.bucket for c in result.evidence.response_claims] if result.evidence else []
        expected = rec["metadata"]["expected_buckets"]
        agree += sum(a == b for a, b in zip(expected, got, strict=False))
        total += len(expected)
    assert total == 58
    assert agree >= 56, f"{agree}/{total} sentences in their intended bucket"
