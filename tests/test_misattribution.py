"""Misattributed noise: a wrong detail carried over from a chunk about another entity."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import evaluate, get_judge
from noisegauge.engine.catalogue import METRIC_NAMES, compute_metrics
from noisegauge.report.align import locate
from noisegauge.samples import Sample
from noisegauge.scoring.metrics import ascore_sample
from noisegauge.scoring.misattribution import distinguishing_detail, find_misattributions
from noisegauge.scoring.sources import quote_span

DATA = Path(__file__).parent / "data" / "misattribution.jsonl"

PRO = "Pro plan subscriptions can be cancelled at any time with a 30-day notice period."
ENT = ("Enterprise Agreement § 12 Termination. Enterprise plan subscriptions require a 90-day "
       "notice period and a signed offboarding form.")
SEED = {"id": "seed", "user_input": "What is the cancellation policy for the Pro plan?",
        "response": "You can cancel the Pro plan at any time. The Pro plan requires a 90-day "
                    "notice period.",
        "reference": PRO, "retrieved_contexts": [PRO, ENT]}


def _row(sample: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return next(evaluate([sample], cache=False, progress=False, **kw).rows())


def test_the_seed_case_is_flagged_with_its_span() -> None:
    row = _row(SEED)
    claim = next(c for c in row["response_claims"] if "90-day" in c["text"])
    assert claim["bucket"] == "hallucination"  # the algebra is untouched...
    assert claim["misattributed_from"] == [1]  # ...and the source is named
    (span,) = claim["misattributed_spans"]
    assert ENT[span["start"]:span["end"]] == span["detail"] == "90-day"
    n = len(row["response_claims"])
    assert row["diagnostics"] == {"noise_misattribution": pytest.approx(1 / n)}
    assert set(row["metrics"]) == set(METRIC_NAMES)  # the family stays the eleven


def test_the_eleven_metrics_do_not_change() -> None:
    report = evaluate([SEED], cache=False, progress=False)
    result = report.results[0]
    assert result.verdicts is not None
    fresh = compute_metrics(result.verdicts)
    assert {n: result.value(n) for n in METRIC_NAMES} == {n: fresh[n].value for n in METRIC_NAMES}
    assert result.value("noise_misattribution") == result.diagnostics["noise_misattribution"].value


@pytest.mark.parametrize(("claim", "reason"), [
    ("The Pro plan requires a 45-day notice period.", "the detail is stated nowhere"),
    ("The Pro plan requires a notice period of 90 users.", "same number, another unit"),
])
def test_true_hallucinations_are_not_flagged(claim: str, reason: str) -> None:
    assert find_misattributions(claim, [PRO, ENT], PRO, SEED["user_input"]) == (), reason


def test_two_counted_words_are_two_quantities() -> None:
    # "12 이상" (12 or more) is no "12월" (December): not the detail of another chunk.
    chunks = ["앱 4.2: 안드로이드 10 이상 지원.", "앱 3.9: 안드로이드 8 이상 지원, 2026년 12월 지원 종료."]
    assert find_misattributions("앱 4.2는 안드로이드 12 이상을 지원합니다.", chunks,
                                "앱 4.2는 안드로이드 10 이상을 지원합니다.",
                                "앱 4.2는 어떤 안드로이드 버전을 지원하나요?") == ()
    found = find_misattributions("앱 4.2는 안드로이드 8 이상을 지원합니다.", chunks,
                                 "앱 4.2는 안드로이드 10 이상을 지원합니다.",
                                 "앱 4.2는 어떤 안드로이드 버전을 지원하나요?")
    assert [m.chunk for m in found] == [1]


def test_a_number_and_two_words_are_topic_enough() -> None:
    # The other chunk shares no word of the asked role ("개발팀장" / "마케팅팀장").
    chunks = ["개발팀장: 김민준, 2022년부터 재직.", "마케팅팀장: 이서연, 2020년부터 재직."]
    found = find_misattributions("개발팀장은 이서연이며 2020년부터 재직했습니다.", chunks,
                                 "개발팀장은 김민준입니다.", "개발팀장은 누구인가요?")
    assert [m.chunk for m in found] == [1]


def test_a_chunk_about_the_same_entity_is_not_another_entity() -> None:
    legacy = "Pro plan subscriptions on legacy contracts require a 90-day notice period."
    claim = "The Pro plan requires a 90-day notice period."
    assert find_misattributions(claim, [legacy], PRO, SEED["user_input"]) == ()
    assert find_misattributions(claim, [PRO, legacy, ENT], PRO, SEED["user_input"])[0].chunk == 2


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"


def test_the_bundled_example_flags_only_details_of_another_entity() -> None:
    """A stale or other-case sentence in the asked entity's own chunk (a Billing Policy v2
    rule beside v3's, the monthly price beside the annual one, a 2023 FAQ line) is a
    conflict inside that chunk, plain relevant noise; the details carried from another
    entity's chunk (US shipping for the EU, Enterprise for Pro or Team) stay flagged."""
    samples = [json.loads(x) for x in EXAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = evaluate(samples, cache=False, progress=False).rows()
    flagged = {(row["id"].split("-")[0], c["bucket"], tuple(c["misattributed_from"]))
               for row in rows for c in row["response_claims"] if c["misattributed_from"]}
    assert flagged == {("sb15", "irrelevant_noise", (1,)), ("sb27", "hallucination", (1,)),
                       ("sb27", "irrelevant_noise", (1,)), ("sb28", "hallucination", (1,)),
                       ("sb29", "hallucination", (1,))}


def test_a_stale_sentence_of_the_same_entity_in_its_own_chunk_is_not_another_entity() -> None:
    own = ("Help Center › Billing › Cancelling a Pro subscription (Billing Policy v3). " + PRO +
           " Legacy rule from Billing Policy v2: Pro cancellations require a 60-day notice period.")
    claim = "Pro cancellations require a 60-day notice period."
    assert find_misattributions(claim, [own, ENT], PRO, SEED["user_input"], entailed_by=[0]) == ()
    assert find_misattributions(claim, [own, ENT], PRO, SEED["user_input"]) == ()
    # In the asked entity's own chunk, a sentence that puts another entity in its place
    # ("Residents of Birch Tower" for "Maple Court residents") is still another entity's.
    lease = ("Lease renewals: residents of Maple Court must submit their renewal form by March "
             "31. Residents of Birch Tower have until April 30, because Birch Tower leases run "
             "on a May–April cycle.")
    found = find_misattributions("Maple Court residents have until April 30 to send in their "
                                 "renewal form.", [lease],
                                 "Maple Court residents must submit their renewal form by March 31.",
                                 "When is the lease renewal deadline at Maple Court?")
    assert [m.chunk for m in found] == [0] and "April 30" in found[0].detail


def test_detail_is_what_the_reference_and_question_do_not_say() -> None:
    d = distinguishing_detail("Toolkit 3.2 supports Python 3.6 to 3.8.",
                              "Toolkit 3.2 supports Python 3.9 to 3.12.",
                              "Which Python versions does Toolkit 3.2 support?")
    assert d is not None and sorted(q.value for q in d.quantities) == [3.6, 3.8]
    assert [q.value for q in d.anchor_quantities] == [3.2]  # the asked version, not the detail
    assert distinguishing_detail("You can cancel the Pro plan.", PRO) is None


def test_korean_claims() -> None:
    chunks = ["Pro 워크스페이스는 분당 최대 600회까지 API를 호출할 수 있습니다.",
              "Enterprise 워크스페이스는 분당 최대 6,000회까지 API를 호출할 수 있습니다."]
    found = find_misattributions("Pro 워크스페이스는 분당 최대 6,000회까지 API를 호출할 수 있습니다.",
                                 chunks, chunks[0], "Pro 요금제의 API 요청 한도는 얼마인가요?")
    assert [m.chunk for m in found] == [1] and found[0].detail.startswith("6,000")


def test_undefined_and_error_rows_say_why() -> None:
    blank = _row({**SEED, "response": ""})
    assert blank["diagnostics"]["noise_misattribution"] is None
    assert "no response claims" in blank["undefined"]["noise_misattribution"]
    report = evaluate([{"user_input": "q", "response": "r"}], cache=False, progress=False)
    row = next(report.rows())
    assert row["status"] == "error" and row["diagnostics"]["noise_misattribution"] is None


def test_resumed_rows_keep_their_misattribution(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = evaluate([SEED], cache=False, progress=False, out=out)
    from noisegauge.runner.evaluate import result_from_row

    stored = json.loads(out.read_text(encoding="utf-8"))
    rebuilt = result_from_row(0, stored, first.results[0].verdicts.to_dict())  # type: ignore[union-attr]
    assert rebuilt.to_row() == first.results[0].to_row()


def _labelled(cases: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[dict[str, Any]],
                                                             set[int]]]:
    """Each labelled case with the response claims on its labelled sentence and the chunks
    they are flagged as misattributed from (the whole pipeline, default judge)."""
    rows = evaluate([{k: c[k] for k in ("user_input", "response", "reference",
                                        "retrieved_contexts")} for c in cases],
                    cache=False, progress=False).rows()
    out = []
    for case, row in zip(cases, rows, strict=True):
        a = case["response"].index(case["claim"])
        b = a + len(case["claim"])
        spans = [(c, locate(c["text"], case["response"])) for c in row["response_claims"]]
        claims = [c for c, sp in spans if sp is not None and sp[0] < b and sp[1] > a]
        out.append((case, claims, {j for c in claims for j in c["misattributed_from"]}))
    return out


def test_labelled_set_precision_and_in_scope_recall() -> None:
    """Every true hallucination stays unflagged; of the misattributed claims the judge leaves
    as hallucinations (in scope), at least 90% are found with the right chunk, and so are 90%
    of all of them (the judge does not take a claim about one entity as said of another)."""
    cases = [json.loads(x) for x in DATA.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(cases) >= 40 and {c["lang"] for c in cases} == {"en", "ko"}
    false_alarms, in_scope, found, positives = [], 0, 0, 0
    for case, claims, flagged in _labelled(cases):
        if not case["misattributed_from"]:
            if flagged:
                false_alarms.append(case["id"])
            continue
        positives += 1
        if any(c["bucket"] == "hallucination" for c in claims):
            in_scope += 1
            found += case["misattributed_from"][0] in flagged
    assert false_alarms == []
    assert in_scope >= 25 and found / in_scope >= 0.9
    assert found / positives >= 0.9


def test_right_claims_about_the_right_entity_stay_grounded() -> None:
    """The held-out split's ``correct`` cases: a true claim about the asked entity, beside a
    chunk about another one, stays entailed (the swap rules must not take it away)."""
    path = DATA.with_name("misattribution_test4.jsonl")
    cases = [c for c in map(json.loads, path.read_text(encoding="utf-8").splitlines())
             if c["kind"] == "correct"]
    assert len(cases) >= 5 and {c["lang"] for c in cases} == {"en", "ko"}
    rows = evaluate([{k: c[k] for k in ("user_input", "response", "reference",
                                        "retrieved_contexts")} for c in cases],
                    cache=False, progress=False).rows()
    for case, row in zip(cases, rows, strict=True):
        claims = [c for c in row["response_claims"] if locate(c["text"], case["claim"])]
        assert claims and all(c["bucket"] != "hallucination" for c in claims), case["id"]


# ---- with an LLM judge ---------------------------------------------------------------------

def _responder(answer: dict[str, Any] | None) -> Any:
    require_extra("openai")
    from noisegauge.testing.fake_openai import judge_responder

    # Verdicts by containment: a claim is entailed only by a premise that says it verbatim,
    # so the 90-day claim stays a hallucination under the Enterprise chunk.
    base = judge_responder(verdict=lambda premise, claim: "entailed" if claim.rstrip(".").lower()
                           in premise.lower() else "neutral")

    def respond(request: Any, choice: int) -> str:
        if "Wrong claims:" in request.first_user:
            return json.dumps(answer)
        return base(request, choice)
    return respond


def _sample() -> Sample:
    return Sample.from_record({**SEED, "response": "The Pro plan requires a 90-day notice period."})


def _score(server: Any, **settings: Any) -> Any:
    judge = get_judge("openai:fake", base_url=server.url, api_key="sk-test", **settings)
    return asyncio.run(ascore_sample(_sample(), judge))


def test_llm_names_the_source_in_one_extra_call(fake_openai_server: Any) -> None:
    fake_openai_server.responder = _responder({"c1": {"passage": "p2", "detail": "90-day"}})
    result = _score(fake_openai_server, misattribution="llm")
    asks = [r for r in fake_openai_server.chat_requests() if "Wrong claims:" in r.first_user]
    assert len(asks) == 1 and result.usage.calls == 3
    claim = result.evidence.response_claims[0]
    assert claim.bucket == "hallucination" and claim.misattributed_from == (1,)
    assert claim.misattributed_spans[0].detail == "90-day"
    schema = asks[0].schema
    assert schema is None or schema["required"] == ["c1"]  # one required key per wrong claim


def test_llm_sources_are_cached_like_verdicts(fake_openai_server: Any, tmp_path: Path) -> None:
    fake_openai_server.responder = _responder({"c1": {"passage": "p2", "detail": "90-day"}})
    judge = get_judge("openai:fake", base_url=fake_openai_server.url, api_key="sk-test",
                      misattribution="llm")
    sample = _sample().to_record()
    runs = [evaluate([sample], judge=judge, cache=tmp_path / "c.sqlite3", progress=False)
            for _ in range(2)]
    assert runs[0].usage.calls == 3 and runs[1].usage.calls == 0  # a rerun costs nothing
    assert [r.results[0].value("noise_misattribution") for r in runs] == [1.0, 1.0]


def test_llm_quote_not_in_the_chunk_is_not_trusted(fake_openai_server: Any) -> None:
    fake_openai_server.responder = _responder({"c1": {"passage": "p2", "detail": "120-day"}})
    result = _score(fake_openai_server, misattribution="llm")
    assert result.evidence.response_claims[0].misattributed_from == ()
    assert result.value("noise_misattribution") == 0.0


def test_llm_option_off_makes_no_extra_call(fake_openai_server: Any) -> None:
    fake_openai_server.responder = _responder({"c1": None})
    result = _score(fake_openai_server)
    assert not any("Wrong claims:" in r.first_user for r in fake_openai_server.chat_requests())
    assert result.usage.calls == 2


def test_quote_span() -> None:
    assert quote_span("90-day", ENT) == (ENT.index("90-day"), ENT.index("90-day") + 6)
    assert quote_span("A  90-DAY notice", "needs a 90-day notice") == (6, 21)
    assert quote_span("", ENT) is None and quote_span("nowhere", ENT) is None


def test_a_claim_read_as_entailed_is_misattributed_only_where_the_entity_is_swapped() -> None:
    """The judge may read "finance director" under "marketing director" as entailed (noise by
    the algebra); the window puts another entity in the asked one's place, so it is
    misattributed too. The same chunk's fact said of its own entity is plain noise, and a
    detail read in a chunk about the asked entity is no misattribution."""
    chunks = ["Our finance director is Ana Silva, based in Lisbon.",
              "Our marketing director is Jon Berg, based in Oslo."]
    q, ref = "Who is the finance director?", "Ana Silva is the finance director."
    swapped = find_misattributions("The finance director is Jon Berg.", chunks, ref, q,
                                   entailed_by=[1])
    assert [m.chunk for m in swapped] == [1] and "Jon Berg" in swapped[0].detail
    assert find_misattributions("The marketing director is Jon Berg.", chunks, ref, q,
                                entailed_by=[1]) == ()
    # Read as entailed by a chunk that does not state the detail (the judge read it
    # loosely): every chunk is looked at, as for a hallucination.
    loose = find_misattributions("The finance director is Jon Berg.", chunks, ref, q,
                                 entailed_by=[0])
    assert [m.chunk for m in loose] == [1]
    # Read as entailed by a chunk that states the detail of the asked entity: it was read
    # there ("Monday to Friday" where the reference says "weekdays"), though another chunk
    # says it too.
    rail = ["Off-peak return: valid after 09:30 Monday to Friday and all day at weekends.",
            "Super off-peak return: valid after 11:00 Monday to Friday."]
    assert find_misattributions("Monday to Friday, you can travel on an off-peak return after "
                                "09:30.", rail, "Off-peak returns are valid after 09:30 on "
                                "weekdays.", "From what time can I use an off-peak return?",
                                entailed_by=[0]) == ()
    # Korean: "일반 회원" / "VIP 회원" beside the same noun.
    ko = ["일반 회원 연회비: 2만 원.", "VIP 회원 연회비: 12만 원, 라운지 이용."]
    found = find_misattributions("일반 회원의 연회비는 12만 원입니다.", ko,
                                 "일반 회원의 연회비는 2만 원입니다.", "일반 회원 연회비는 얼마인가요?",
                                 entailed_by=[1])
    assert [m.chunk for m in found] == [1]


def test_a_capability_the_reference_denies_is_the_detail() -> None:
    """"Yes, the Lite plan has roaming" where the reference says it has none: the denied words
    are the detail, found in the chunk about the plan that has it; with no such chunk, or
    when the claim itself is negated, nothing is flagged."""
    chunks = ["Lite plan: 5 GB of data, calls within the country.",
              "Max plan: 50 GB of data and free international roaming."]
    q, ref = "Does the Lite plan include roaming?", "No, the Lite plan does not include roaming."
    found = find_misattributions("The Lite plan includes free international roaming.", chunks, ref, q)
    assert [m.chunk for m in found] == [1] and "roaming" in found[0].detail
    assert find_misattributions("The Lite plan includes free international roaming.",
                                chunks[:1], ref, q) == ()
    ko = ["라이트 요금제: 데이터 5GB.", "맥스 요금제: 데이터 50GB, 해외 로밍 무료."]
    found = find_misattributions("라이트 요금제는 해외 로밍을 무료로 제공합니다.", ko,
                                 "아니요, 라이트 요금제에는 해외 로밍이 없습니다.",
                                 "라이트 요금제에 해외 로밍이 있나요?")
    assert [m.chunk for m in found] == [1]


def test_another_numbered_entity_is_another_entity() -> None:
    """"2학기" (second semester) names another entity than the asked "1학기", though every
    word is shared."""
    chunks = ["1학기 등록금 납부: 2월 20일부터 2월 24일까지.", "2학기 등록금 납부: 8월 19일부터 8월 23일까지."]
    found = find_misattributions("1학기 등록금 납부는 8월 19일부터 8월 23일까지입니다.", chunks,
                                 "1학기 등록금 납부는 2월 20일부터 2월 24일까지입니다.",
                                 "1학기 등록금 납부 기간은 언제인가요?")
    assert [m.chunk for m in found] == [1]


def test_a_comparison_that_names_both_entities_is_not_misattributed() -> None:
    """The claim names what the window is about ("the Duo"): it states that entity's fact."""
    chunks = ["Solo speaker: 10 hours of battery.", "Duo speaker: 24 hours of battery."]
    q, ref = "How long does the Solo speaker's battery last?", "The Solo lasts 10 hours."
    assert find_misattributions("Unlike the Solo, the Duo speaker lasts 24 hours.", chunks, ref,
                                q) == ()
    assert [m.chunk for m in find_misattributions("The Solo speaker lasts 24 hours.", chunks,
                                                  ref, q)] == [1]


def test_a_clause_about_another_entity_in_a_shared_sentence() -> None:
    """One sentence about two entities: the clause about the other one is the source."""
    chunk = ("At Hillview, Dr. Mensah sees children on Mondays and Wednesdays, while Dr. Ruiz "
             "sees adults on Tuesdays and Fridays.")
    found = find_misattributions("Dr. Mensah sees children on Tuesdays and Fridays.", [chunk],
                                 "Dr. Mensah sees children on Mondays and Wednesdays.",
                                 "Which days does Dr. Mensah see children?")
    assert [m.chunk for m in found] == [0] and "Tuesdays" in found[0].detail


def test_a_heading_about_another_entity_swaps_it_for_an_entailed_claim() -> None:
    chunks = ["Student tickets: $8, valid for one ride.", "Senior tickets: $5, valid all day."]
    q, ref = "How much is a student ticket?", "A student ticket costs $8."
    found = find_misattributions("Student tickets cost $5 and are valid all day.", chunks, ref,
                                 q, entailed_by=[1])
    assert [m.chunk for m in found] == [1]


def test_a_no_answer_denies_what_the_question_asks() -> None:
    """"No, on buses only": the question's "regional trains" is the detail, found in the
    senior pass's row; the claim's subject ("the youth pass") stays what it is about."""
    chunks = ["Youth pass | $35 | buses only", "Senior pass | $49 | buses and regional trains"]
    found = find_misattributions("The youth pass also covers regional trains.", chunks,
                                 "No, the youth pass is valid on buses only.",
                                 "Can I use the youth pass on regional trains?")
    assert [m.chunk for m in found] == [1]


def test_no_limit_said_in_two_words_is_the_unlimited_detail() -> None:
    chunks = ["라이트 요금제: 세금계산서 월 50건 발행.", "맥스 요금제: 세금계산서 무제한 발행."]
    found = find_misattributions("라이트 요금제는 세금계산서를 제한 없이 발행할 수 있습니다.", chunks,
                                 "라이트 요금제는 세금계산서를 월 50건까지 발행할 수 있습니다.",
                                 "라이트 요금제는 세금계산서를 몇 건 발행할 수 있나요?")
    assert [m.chunk for m in found] == [1]


def test_another_number_after_the_same_name_is_another_entity() -> None:
    """"Zone 1" is another zone than the asked "Zone 2"; a price is never stated by the "2"
    of "Zone 2"."""
    chunks = ["Zone 1 fares: $2.75 peak, $2.00 off-peak.", "Zone 2 fares: $3.50 peak, $2.60 off-peak."]
    found = find_misattributions("An off-peak ride in Zone 2 costs $2.00.", chunks,
                                 "The Zone 2 off-peak fare is $2.60.",
                                 "What's the off-peak fare in Zone 2?")
    assert [m.chunk for m in found] == [0] and found[0].detail.startswith("2.00")


def test_a_denied_feature_named_in_capitals_is_the_detail() -> None:
    """"Classic does not support SAML SSO": the denied "SAML SSO" is the detail (what the
    claim is about, "Classic", never is), found in the New console's row; a "question? answer"
    claim is read by its answer."""
    chunks = ["Classic console: SAML SSO not supported; password policies only.",
              "New console: SAML SSO and SCIM provisioning."]
    q, ref = ("Can I set up SSO in the Classic console?",
              "No, the Classic console does not support SAML SSO.")
    for claim in ("The Classic console supports SAML SSO.",
                  "Can I set up SSO in the Classic console? Yes, the Classic console supports "
                  "SAML SSO."):
        assert [m.chunk for m in find_misattributions(claim, chunks, ref, q)] == [1], claim


def test_every_labelled_split_keeps_its_precision_and_recall() -> None:
    """Every split (1,421 cases, en + ko): no more than eighteen false alarms among the 907
    cases that must not be flagged (true hallucinations, right claims, true sentences about
    the other entity; twelve now), and at least 83% of the 514 misattributed claims found
    with their chunk (429, 83.5% now). A regression guard: the held-out figures are the
    bench's (README)."""
    cases = [json.loads(x) for path in sorted(DATA.parent.glob("misattribution*.jsonl"))
             for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(cases) >= 1420
    false_alarms, found, positives = 0, 0, 0
    for case, _, flagged in _labelled(cases):
        if case["misattributed_from"]:
            positives += 1
            found += case["misattributed_from"][0] in flagged
        elif flagged:
            false_alarms += 1
    assert false_alarms <= 18 and found / positives >= 0.83, (false_alarms, found, positives)


def test_faq_labels_negated_claims_and_numbers_that_name_things() -> None:
    """"Q:" is a label, not the entity a chunk is about; a claim that denies was not carried
    from a window that asserts; "PayRollo 5.0" is not the "5" of "5 bank accounts"; a weekday
    alone is a detail."""
    chunks = ["Q: Do hourly staff get overtime? A: Yes, at 1.5x.",
              "Q: How are salaried staff bonuses paid? A: Entered by hand before each pay run."]
    q, ref = "Do hourly staff get overtime?", "Yes, hourly staff get overtime at 1.5x."
    assert find_misattributions("Salaried staff bonuses are entered by hand before each pay run.",
                                chunks, ref, q, entailed_by=[1]) == ()
    rows = ["Lite plan: on-site installation included.", "Max plan: on-site installation."]
    assert find_misattributions("No, the Lite plan does not include on-site installation.", rows,
                                "The Lite plan includes on-site installation.",
                                "Does the Lite plan include installation?") == ()
    notes = ["PayRollo 4.2 notes: direct deposit split across up to 3 accounts.",
             "PayRollo 5.0 notes: direct deposit split across up to 5 accounts."]
    found = find_misattributions("From version 4.2, deposit can be split across 5 accounts.", notes,
                                 "In PayRollo 4.2, deposit can be split across up to 3 accounts.",
                                 "In PayRollo 4.2, how many accounts can deposit be split across?")
    assert [m.chunk for m in found] == [1]
    days = ["중앙관: 매주 월요일 휴관.", "동부 분관: 매주 화요일 휴관."]
    found = find_misattributions("동부 분관은 매주 월요일에 휴관합니다.", days,
                                 "동부 분관은 매주 화요일에 휴관합니다.", "동부 분관은 언제 쉬나요?")
    assert [m.chunk for m in found] == [0]


def test_a_yes_answer_to_a_no_reference_is_denied_all_it_asserts() -> None:
    """"Yes, Basic includes SAML SSO" where the reference answers "No. Basic uses password
    login only; SAML SSO is included on the Business tier": the reference names SAML SSO
    (of the other tier), so only the answers tell what is denied: all the claim asserts of
    its subject past the reference's first clause. Korean clauses end at "...이며", "...하고"."""
    chunks = ["Basic tier: up to 10 users, password login only.",
              "Business tier: up to 200 users, SAML SSO included."]
    q = "Does the Basic tier support single sign-on?"
    ref = "No. Basic uses password login only; SAML SSO is included on the Business tier."
    found = find_misattributions("Yes, Basic includes SAML SSO.", chunks, ref, q)
    assert [m.chunk for m in found] == [1] and "SAML SSO" in found[0].detail
    # the same words without the answers: the reference states them, so no detail
    assert find_misattributions("Basic includes SAML SSO.", chunks, ref, q) == ()
    ko = ["스트림온 스탠다드: 동시 시청 2대, 최대 화질 풀HD(1080p).",
          "스트림온 프리미엄: 동시 시청 4대, 4K UHD 지원."]
    found = find_misattributions("네, 스탠다드 요금제에서도 4K UHD 화질로 시청하실 수 있습니다.", ko,
                                 "아니요. 스탠다드는 풀HD까지이며 4K UHD는 프리미엄에서만 지원됩니다.",
                                 "스탠다드 요금제로 4K 화질로 볼 수 있나요?")
    assert [m.chunk for m in found] == [1] and "4K" in found[0].detail


def test_a_quoted_name_and_a_number_beside_a_denial_are_details() -> None:
    """A quoted name is a name without capitals ("캐릭터 '소율'"); a number is the detail
    whatever the claim denies beside it ("up to 60 minutes without extra charges")."""
    ko = ["v3.2 업데이트: 신규 캐릭터 '하랑' 추가.", "v3.3 업데이트: 신규 캐릭터 '소율' 추가, PvP 시즌 3 시작."]
    found = find_misattributions("v3.2 업데이트에서는 신규 캐릭터 '소율'이 추가되었습니다.", ko,
                                 "v3.2 업데이트에서는 신규 캐릭터 '하랑'이 추가되었습니다.",
                                 "v3.2 업데이트에 어떤 신규 캐릭터가 추가됐나요?")
    assert [m.chunk for m in found] == [1] and "소율" in found[0].detail
    bikes = ["Day Pass: unlimited 45-minute rides on classic bikes for 24 hours.",
             "Annual Membership: unlimited 60-minute rides on classic bikes."]
    found = find_misattributions("With a day pass, each classic-bike ride can last up to 60 "
                                 "minutes without extra charges.", bikes,
                                 "Each classic-bike ride on a day pass can last up to 45 minutes.",
                                 "How long can each ride be on a day pass?")
    assert [m.chunk for m in found] == [1] and found[0].detail.startswith("60")


def test_an_faq_answer_is_about_what_its_question_names() -> None:
    """"Q: Does Flex include data in Mexico? A: Yes, up to 5 GB per month": the answer's
    "5 GB" is the carried detail, not what the window is about; the question names that
    ("Mexico"). A claim that names what a question asks about states that entity's fact."""
    chunks = ["Q: Does Flex include data in Canada?\nA: No. Data in Canada is charged at $10 per day.",
              "Q: Does Flex include data in Mexico?\nA: Yes, up to 5 GB per month at no extra cost."]
    q = "Is roaming data included in my Flex plan in Canada?"
    ref = "No. Flex doesn't include data in Canada; it's charged at $10 per day."
    found = find_misattributions("Your Flex plan includes up to 5 GB of data per month in "
                                 "Canada at no extra charge.", chunks, ref, q)
    assert [m.chunk for m in found] == [1] and found[0].detail.startswith("5")
    assert find_misattributions("In Mexico, your Flex plan includes up to 5 GB of data per "
                                "month at no extra charge.", chunks, ref, q) == ()
    # A window that says nothing but the carried number names nothing else: not flagged.
    assert find_misattributions("Your Flex plan includes up to 5 GB of data per month in Canada.",
                                ["Flex in Canada: charged at $10 per day.", "5 GB per month."],
                                ref, q) == ()


def test_own_numbers_idioms_free_and_months_in_days() -> None:
    """The asked model's own number is no carried detail ("... and 20 hours with the case"),
    nor is "a single charge"; "free of charge" is carried from "no fee"; "three months" is
    the "90 days" of another plan."""
    buds = ["Model: X2 Pro\nBattery (earbuds): up to 8 hours\nBattery (with case): up to 32 hours",
            "Model: X2 Lite\nBattery (earbuds): up to 5 hours\nBattery (with case): up to 20 hours"]
    found = find_misattributions("The X2 Lite earbuds last up to 8 hours on a single charge, and "
                                 "up to 20 hours with the case.", buds,
                                 "The X2 Lite earbuds last up to 5 hours, or 20 hours with the case.",
                                 "How long does the battery last on the X2 Lite earbuds?")
    assert [m.chunk for m in found] == [0] and found[0].detail.startswith("8")
    water = ["New account setup (Hillcrest service area): no fee.",
             "New account setup (Riverside service area): $35 one-time fee."]
    q, ref = ("Is there a fee to set up a new water account in Riverside?",
              "Yes. Setting up an account in Riverside costs a one-time $35 fee.")
    found = find_misattributions("Setting up a new water account in Riverside is free of charge.",
                                 water, ref, q)
    assert [m.chunk for m in found] == [0] and found[0].detail == "no"
    assert find_misattributions("Setting up a new water account in Riverside is free of charge.",
                                water[1:], ref, q) == ()
    backups = ["Business plan: daily backups are retained for 90 days.",
               "Team plan: daily backups are retained for 30 days."]
    found = find_misattributions("On the Team plan, daily backups are kept for three months.",
                                 backups, "On the Team plan, daily backups are kept for 30 days.",
                                 "How long are backups kept on the Team plan?")
    assert [m.chunk for m in found] == [0]


def test_weekdays_times_a_week_and_hours_in_days() -> None:
    """"월·수·금" are the weekdays "월요일, 수요일, 금요일" written short ("Mon, Wed" too, but not
    "sat" alone); "three times a week" is "3 days per week"; "two days" is "48 hours"."""
    bins = ["A동~C동 재활용 배출: 월·수·금 오전", "D동~F동 재활용 배출: 화·목·토 오전"]
    found = find_misattributions("E동은 월요일, 수요일, 금요일 오전에 내놓으시면 돼요.", bins,
                                 "E동은 화요일, 목요일, 토요일 오전에 배출합니다.", "E동 재활용은 언제 버려요?")
    assert [m.chunk for m in found] == [0] and found[0].detail.startswith("월")
    gym = ["Off-peak members: classes 2 days per week (Tue, Thu).",
           "Full members: classes 4 days per week (Mon, Wed, Fri, Sat)."]
    found = find_misattributions("Off-peak members can join classes four times a week.", gym,
                                 "Off-peak members can join classes 2 days per week.",
                                 "How often can off-peak members attend classes?")
    assert [m.chunk for m in found] == [1]
    repair = ["Standard repair: your laptop is returned within 5 business days.",
              "Express repair: your laptop is returned within 48 hours."]
    found = find_misattributions("With standard repair, you get your laptop back within two days.",
                                 repair, "Standard repairs are returned within 5 business days.",
                                 "How long does a standard repair take?")
    assert [m.chunk for m in found] == [1] and found[0].detail.startswith("48")
    assert find_misattributions("With standard repair, you get your laptop back within three days.",
                                repair, "Standard repairs are returned within 5 business days.",
                                "How long does a standard repair take?") == ()


def test_korean_people_counted_players_and_free_said_as_zero() -> None:
    """A Korean name before a title is a name ("최유진 선생님"); "eight players" is a number
    (only "one"/"a single" counting a noun is an idiom); "no fee" is carried from "Fee: $0"
    when the claim's other number is the asked entity's own."""
    staff = ["피아노 | 최유진 선생님 | 화·목 오후", "바이올린 | 한지훈 선생님 | 월·수 오후"]
    found = find_misattributions("바이올린 수업은 최유진 선생님이 맡고 계세요.", staff,
                                 "바이올린 수업은 한지훈 선생님이 가르칩니다.", "바이올린은 어느 선생님이 가르치나요?")
    assert [m.chunk for m in found] == [0] and "최유진" in found[0].detail
    modes = ["Duo: co-op for up to 2 players.", "Warband: raids for up to 8 players."]
    found = find_misattributions("Duo matches hold up to eight players.", modes,
                                 "Duo matches hold up to 2 players.", "How many players fit in Duo?")
    assert [m.chunk for m in found] == [1]
    cards = ["Gold Card\nAnnual fee: $0\nMinimum income: $40,000",
             "Classic Card\nAnnual fee: $29\nMinimum income: $15,000"]
    found = find_misattributions("The Classic Card has no annual fee, and you qualify with an "
                                 "income of $15,000.", cards,
                                 "Yes, the Classic Card has a $29 annual fee.",
                                 "Does the Classic Card have an annual fee?")
    assert [m.chunk for m in found] == [0] and found[0].detail.startswith("$0")


def test_a_detail_read_in_two_chunks() -> None:
    """A claim may take one number from a general notice and the wrong one from another
    entity's chunk ("Level 3 ... four hours"); where one chunk states every number, only
    that one is where the detail came from."""
    chunks = ["Notice: Level 3 water restrictions apply from June to August.",
              "Zone A: garden hoses may be used 4 hours per day.",
              "Zone B: garden hoses may be used 2 hours per day."]
    found = find_misattributions("Under Level 3, Zone B residents may use a hose four hours a day.",
                                 chunks, "Zone B residents may use garden hoses 2 hours per day.",
                                 "How long can I use a hose in Zone B?")
    assert [m.chunk for m in found] == [1]
    bags = ["Basic fare: one cabin bag up to 7 kg.", "Plus fare: two cabin bags up to 10 kg each.",
            "Max fare: three cabin bags up to 10 kg each."]
    found = find_misattributions("The Basic fare allows two cabin bags of up to 10 kg each.", bags,
                                 "The Basic fare includes one cabin bag up to 7 kg.",
                                 "How much cabin baggage does Basic include?")
    assert [m.chunk for m in found] == [1]
    # What the window states must be a value, and a code is never read in another chunk:
    # "BF25보다 ... 1등급" compares the two models.
    rows = ["모델명: BF25 / 냉방면적: 82.6㎡(약 25평) / 에너지효율: 2등급 / 출고가: 2,490,000원",
            "모델명: BF22 / 냉방면적: 72.7㎡(약 22평) / 에너지효율: 1등급 / 출고가: 2,090,000원"]
    assert find_misattributions("BF25보다 냉방면적은 작지만 에너지효율은 1등급으로 더 높아요.", rows,
                                "BF22의 냉방면적은 72.7㎡(약 22평)입니다.",
                                "BF22 모델 냉방면적이 몇 평이에요?") == ()


def test_a_variant_a_title_and_a_letter_name_other_models() -> None:
    """"Nimbus Kettle Pro" is another model than the asked "Nimbus Kettle"; a claim that
    names a chunk's title ("Volt 15 specs") or heading ("Bolt X:") compares, it does not
    misattribute."""
    kettles = ["Nimbus Kettle (1.2 L): plastic body, keep-warm not available.",
               "Nimbus Kettle Pro (1.7 L): steel body, keep-warm for up to 30 minutes."]
    found = find_misattributions("The Nimbus Kettle keeps water warm for up to 30 minutes.",
                                 kettles, "No, the Nimbus Kettle has no keep-warm function.",
                                 "Does the Nimbus Kettle keep water warm?")
    assert [m.chunk for m in found] == [1] and found[0].detail.startswith("30")
    specs = ["Volt 15 specs\nWeight: 2.1 kg\nBattery: 90 Wh", "Volt 13 specs\nWeight: 1.4 kg\nBattery: 60 Wh"]
    assert find_misattributions("The Volt 13 weighs 1.4 kg, lighter than the 2.1 kg Volt 15.",
                                specs, "The Volt 13 weighs 1.4 kg.", "How heavy is the Volt 13?") == ()
    bikes = ["Bolt X: range up to 40 km, top speed 25 km/h.", "Bolt Max: range up to 80 km."]
    assert find_misattributions("Bolt X manages about 40 km per charge.", bikes,
                                "The Bolt Max has a range of up to 80 km.",
                                "How far does the Bolt Max go?", entailed_by=[0]) == ()
    rooms = ["청소년 열람실: 평일 09:00~20:00", "일반 열람실: 평일 09:00~23:00"]
    assert find_misattributions("청소년 열람실은 평일 오후 8시에 문을 닫아요.", rooms,
                                "일반 열람실은 평일 밤 11시까지 엽니다.", "열람실 몇 시까지 해요?") == ()


def test_the_llm_is_told_a_stale_line_of_the_same_entity_is_no_source() -> None:
    from noisegauge.judges.llm.attribution import ATTRIBUTION_VERSION, attribution_messages

    system = attribution_messages("q", "r", ["p"], ["c"])[0]["content"]
    assert "stale or other-case line about the claim's own entity" in " ".join(system.split())
    assert ATTRIBUTION_VERSION != "ng-attr-1"  # a changed prompt: cached answers not reused
