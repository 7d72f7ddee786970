"""The report's pure parts: escaping, claim alignment, reading bands and the diagnosis."""

from __future__ import annotations

import json

import pytest

from noisegauge.report.align import best_unit, locate
from noisegauge.report.diagnosis import Point, band, diagnose, quadrant
from noisegauge.report.markup import Html, el, json_for_script

EVIL = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '</style><b>x</b>',
        "</script><script>window.pwned=1</script>", "<!-- x -->", "a & b", "\u2028line"]


# ---- markup -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", EVIL)
def test_text_and_attributes_are_escaped(text: str) -> None:
    out = el("p", {"title": text, "data_x": text}, text)
    assert "<script" not in out and "<img" not in out and "</style" not in out
    assert out.startswith('<p title="') and out.endswith("</p>")
    assert out.count("<") == 2  # only the element's own tags


def test_html_passes_through_and_names_are_checked() -> None:
    assert el("div", None, Html("<b>x</b>"), "<b>") == "<div><b>x</b>&lt;b&gt;</div>"
    assert el("input", {"disabled": True, "value": None}) == "<input disabled>"
    assert el("svg", {"viewBox": "0 0 1 1"}).startswith('<svg viewBox="0 0 1 1">')
    with pytest.raises(ValueError):
        el("p onclick=x")
    with pytest.raises(ValueError):
        el("p", {"on click": "x"})


def test_json_for_script_has_no_angle_bracket_and_round_trips() -> None:
    data = {"texts": EVIL, "nested": [{"k": "</ScRiPt >"}]}
    out = json_for_script(data)
    assert "<" not in out and ">" not in out and "&" not in out
    assert "\u2028" not in out
    assert json.loads(out) == data


# ---- alignment ----------------------------------------------------------------------------

RESPONSE = ("You can cancel a **Pro plan** at any time.  The Pro plan requires a 90-day notice "
            "period, and your workspace stays active until it ends.")


def test_exact_and_normalised_claims_are_found() -> None:
    a, b = locate("The Pro plan requires a 90-day notice period", RESPONSE)
    assert RESPONSE[a:b] == "The Pro plan requires a 90-day notice period"
    a, b = locate("You can cancel a Pro plan at any time.", RESPONSE)  # markdown and case
    assert RESPONSE[a:b] == "You can cancel a **Pro plan** at any time."


def test_paraphrased_claim_gets_its_clause_not_the_whole_sentence() -> None:
    a, b = locate("The workspace remains active until the notice period ends.", RESPONSE)
    assert RESPONSE[a:b] == "your workspace stays active until it ends"


def test_unrelated_claim_is_not_placed() -> None:
    assert locate("Refunds are paid to the original card within 5 days.", RESPONSE) is None
    assert locate("", RESPONSE) is None and locate("x", "") is None


def test_a_bare_answers_claim_is_found_by_its_answer() -> None:
    # The lexical judge puts the question before a bare answer; the response holds only the
    # answer, and the question's words must not pull the overlap under its floor.
    text = "B형은 만 55세부터 연금을 수령하실 수 있습니다."
    claim = "하나로 연금저축 B형은 몇 살부터 연금을 받을 수 있나요? " + text
    assert locate(claim, text) == (0, len(text))
    a, b = locate("Which plan has SSO? Only Enterprise", "Only **Enterprise** does.")
    assert "Enterprise" in "Only **Enterprise** does."[a:b]


def test_korean_claims_align_on_stems() -> None:
    text = "Team 요금제는 14일 무료 체험을 제공합니다. 카드 등록은 필요하지 않습니다."
    a, b = locate("Team 요금제의 무료 체험은 14일입니다", text)
    assert text[a:b].startswith("Team 요금제는 14일")
    span = best_unit("카드 등록이 필요하지 않다", text)
    assert span is not None and "카드" in text[span[0]:span[1]]


# ---- bands and diagnosis ------------------------------------------------------------------

@pytest.mark.parametrize(("value", "key"), [(0.0, "zero"), (0.049, "zero"), (0.05, "low"),
                                            (0.1, "occasional"), (0.3, "occasional"),
                                            (0.35, "between"), (0.4, "between"), (0.41, "red"),
                                            (1.0, "red")])
def test_reading_bands(value: float, key: str) -> None:
    assert band(value).key == key


def P(i: int, cp: float, rel: float, irr: float, mis: int = 0) -> Point:
    return Point(i, f"s{i}", cp, rel, irr, mis)


def test_quadrants() -> None:
    assert quadrant(P(0, 0.2, 0.0, 0.5)) == "retrieval"
    assert quadrant(P(0, 0.8, 0.5, 0.0)) == "generator"
    assert quadrant(P(0, 0.2, 0.0, 0.0)) == "noisy_retrieval"
    assert quadrant(P(0, 0.5, 0.05, 0.04)) == "healthy"  # 0.5 is not low; 0.09 is not high


def test_verdict_names_retrieval_and_its_worst_samples() -> None:
    pts = [P(0, 0.2, 0, 0.3), P(1, 0.25, 0, 0.6), P(2, 0.3, 0, 0.5), P(3, 0.9, 0, 0),
           P(4, 0.8, 0.1, 0)]
    v = diagnose(pts, left_out=2)
    assert v.side == "retrieval" and v.headline == "Fix retrieval first"
    assert [i for i, _ in v.drivers] == [1, 2, 0]  # worst first, only the retrieval side
    assert "4 of 5 samples" in v.text and "2 sample(s) could not be placed" in v.text
    assert v.counts == {"retrieval": 3, "generator": 1, "noisy_retrieval": 0, "healthy": 1}
    assert v.plain().endswith("Driven by: s1, s2, s0.")


def test_verdict_names_the_generator_and_relevant_chunk_leakage() -> None:
    v = diagnose([P(0, 0.9, 0.5, 0), P(1, 0.7, 0.4, 0.1), P(2, 0.2, 0, 0.1), P(3, 1.0, 0, 0)])
    assert v.side == "generator" and [i for i, _ in v.drivers] == [0, 1]
    assert "relevant chunks" in v.text


def test_verdict_both_none_and_undetermined() -> None:
    assert diagnose([P(0, 0.9, 0.5, 0), P(1, 0.1, 0, 0.5)]).side == "both"
    quiet = diagnose([P(0, 0.2, 0, 0), P(1, 0.3, 0, 0), P(2, 0.9, 0, 0, mis=1)])
    assert quiet.side == "none" and not quiet.drivers
    assert "harmless" in quiet.text and "another entity" in quiet.text
    assert diagnose([], left_out=3).side == "undetermined"


def test_verdict_follows_the_means_when_both_modes_read_about_0() -> None:
    """A stress run pooled over levels: 2 leaking samples of 50, means 0.000 / 0.040."""
    pts = [P(i, 0.2, 0, 0) for i in range(48)] + [P(48, 0.2, 0, 1.0), P(49, 0.1, 0, 1.0)]
    v = diagnose(pts)
    assert v.side == "none" and v.headline == "Noise is about 0 overall"
    assert "relevant 0.000, irrelevant 0.040" in v.text and "fix" not in v.headline.lower()
    assert [i for i, _ in v.drivers] == [48, 49]  # still named, worst first
    assert "2 of 50 samples" in v.text
    # one step above the band, the same samples do call for a fix
    assert diagnose(pts + [P(50, 0.2, 0, 1.0)] * 2).side == "retrieval"
