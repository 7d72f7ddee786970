"""The LLM judge against servers that are not OpenAI: output-mode negotiation, the
llama-cpp-python persona of the fake server, tolerant answers, fail-fast probing."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import Verdict, get_judge
from noisegauge.errors import JudgeUnavailable
from noisegauge.infra.store import JudgeCache
from noisegauge.judges.base import capture_raw, metered
from noisegauge.judges.llm import modes
from noisegauge.judges.llm.judge import OpenAIJudge
from noisegauge.testing import FakeOpenAIServer, FakeRequest, judge_responder
from noisegauge.testing.fake_openai import overlap_verdict
from noisegauge.testing.llama_cpp import LlamaCppPythonServer

require_extra("openai")

PREMISES = [f"Plan {name} costs {price} dollars per month." for name, price in
            [("Basic", 5), ("Pro", 20), ("Team", 50), ("Max", 90)]]
CLAIMS = ["Plan Pro costs 20 dollars per month.", "Plan Team costs 50 dollars per month."]


@pytest.fixture
def llama(monkeypatch: pytest.MonkeyPatch) -> Iterator[LlamaCppPythonServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with LlamaCppPythonServer() as server:
        yield server


def judge_for(server: FakeOpenAIServer, **settings: Any) -> OpenAIJudge:
    judge = get_judge("openai:qwen2.5-1.5b", base_url=server.url, **settings)
    assert isinstance(judge, OpenAIJudge)
    return judge


def expected(premises: list[str], claims: list[str]) -> list[list[Verdict]]:
    """What the fake "model" answers (``overlap_verdict``), by premise and claim."""
    return [[Verdict(overlap_verdict(p, c)) for c in claims] for p in premises]


# -- negotiation ----------------------------------------------------------------------------

def test_llama_cpp_refusal_costs_one_request_even_with_concurrent_calls(llama):
    judge = judge_for(llama, strategy="per_premise")
    premises = PREMISES + [p.replace("Plan", "The plan") for p in PREMISES]

    async def run() -> list[list[list[Verdict]]]:
        with metered() as usage:  # eight calls at once, one per premise
            found = await asyncio.gather(*(judge.check_many([p], CLAIMS) for p in premises))
        assert usage.fallbacks == 1 and usage.calls == 8
        return list(found)
    results = asyncio.run(run())
    assert [r[0] for r in results] == expected(premises, CLAIMS)
    refused = [r for r in llama.chat_requests() if r.status != 200]
    assert [(r.mode, r.status) for r in refused] == [("json_schema", 500)]
    assert all(r.body["response_format"]["type"] == "json_object" and "schema" in
               r.body["response_format"] for r in llama.chat_requests() if r.status == 200)
    report = judge.endpoint_report()
    assert report["output_mode"] == "json_object_schema"
    assert report["refused_modes"] == ["json_schema"] and report["fallbacks"] == 1


def test_the_mode_that_worked_is_kept_in_the_judge_cache(llama, tmp_path):
    store = JudgeCache(tmp_path / "cache.sqlite3")
    judge_for(llama).use_store(store)
    asyncio.run(judge_for(llama).check(PREMISES[0], CLAIMS))
    store.flush()
    assert [r.mode for r in llama.chat_requests()] == ["json_schema", "json_object"]
    # A new process: nothing known in memory, the cache says json_object_schema.
    modes._NEGOTIATIONS.clear()
    judge = judge_for(llama)
    judge.use_store(JudgeCache(tmp_path / "cache.sqlite3"))
    asyncio.run(judge.check(PREMISES[1], CLAIMS))
    assert [r.mode for r in llama.chat_requests()][2:] == ["json_object"]
    assert judge.endpoint_report()["mode_from_cache"] is True


def test_a_cached_mode_that_stops_working_is_negotiated_again(fake_openai_server, tmp_path):
    store = JudgeCache(tmp_path / "cache.sqlite3")
    judge = judge_for(fake_openai_server)
    judge.use_store(store)
    asyncio.run(judge.check(PREMISES[0], CLAIMS))
    modes._NEGOTIATIONS.clear()
    fake_openai_server.json_schema = False  # the server was replaced by one without it
    judge = judge_for(fake_openai_server)
    judge.use_store(store)
    assert asyncio.run(judge.check(PREMISES[1], CLAIMS)) == expected(PREMISES[1:2], CLAIMS)[0]
    assert [(r.mode, r.status) for r in fake_openai_server.chat_requests()] == [
        ("json_schema", 200), ("json_schema", 400), ("json_object", 200)]


def test_a_500_that_names_no_output_field_is_retried_not_a_fallback(llama, fast_retries):
    llama.add_fault(status=500, body={"error": {"message": "slot unavailable"}})
    judge = judge_for(llama, output_mode="json_object_schema")
    assert asyncio.run(judge.check(PREMISES[1], CLAIMS)) == expected(PREMISES[1:2], CLAIMS)[0]
    assert judge.stats.retries == 1 and judge.stats.mode_fallbacks == 0


def test_a_400_that_names_no_output_field_is_an_error_not_a_fallback(fake_openai_server):
    fake_openai_server.add_fault(status=400, body={"error": {"message": "context too long"}},
                                 times=5)
    with pytest.raises(JudgeUnavailable, match="context too long"):
        asyncio.run(judge_for(fake_openai_server).check(PREMISES[0], CLAIMS))
    assert len(fake_openai_server.chat_requests()) == 1


def test_a_forced_mode_the_server_refuses_says_so(llama):
    with pytest.raises(JudgeUnavailable, match=r"(?s)HTTP 500.*does not support output mode "
                                               r"json_schema.*output_mode='auto'"):
        asyncio.run(judge_for(llama, output_mode="json_schema").check(PREMISES[0], CLAIMS))
    assert len(llama.chat_requests()) == 1


class VllmLike(FakeOpenAIServer):
    """Says it is vLLM and refuses every response_format (as a build without it would)."""

    def model_list(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "qwen", "object": "model", "owned_by": "vllm"}]}

    def _answer(self, request: FakeRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        if "response_format" in request.body:
            return 400, {"error": {"message": "response_format is not supported"}}, {}
        return super()._answer(request)


def test_vllm_guided_decoding_is_tried_where_the_server_is_vllm(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with VllmLike() as server:
        judge = get_judge("openai:qwen", base_url=server.url)
        asyncio.run(judge.probe())
        asyncio.run(judge.check(PREMISES[0], CLAIMS))
        bodies = [r.body for r in server.chat_requests()]
    assert [b.get("response_format", {}).get("type") for b in bodies] == [
        "json_schema", "json_object", None]
    assert bodies[2]["structured_outputs"]["json"]["required"] == ["p1"]


def test_guided_decoding_is_not_sent_to_servers_of_unknown_family(fake_openai_server):
    fake_openai_server.json_schema = fake_openai_server.json_object = False
    asyncio.run(judge_for(fake_openai_server).check(PREMISES[0], CLAIMS))
    assert not any("structured_outputs" in r.body or "guided_json" in r.body or "format" in
                   r.body for r in fake_openai_server.chat_requests())


# -- tolerant answers from a small model ------------------------------------------------------

def test_flat_answers_of_json_mode_are_read_without_re_asking(llama):
    # Without a schema the persona answers {"p1": "neutral"} (one claim per premise) or a
    # list of records (several): both unambiguous, so no re-ask.
    judge = judge_for(llama, output_mode="json_object")
    with capture_raw() as raw:
        one = asyncio.run(judge.check_many(PREMISES, CLAIMS[:1]))
    assert one == expected(PREMISES, CLAIMS[:1])
    assert json.loads(raw[0]) == {"p1": "neutral", "p2": "entailed", "p3": "neutral",
                                          "p4": "neutral"}
    two = asyncio.run(judge.check_many(PREMISES, CLAIMS))
    assert two == expected(PREMISES, CLAIMS)
    assert judge.stats.repairs == 0 and judge.stats.calls == 2


def test_chatty_plain_text_is_read(llama):
    judge = judge_for(llama, output_mode="text")
    assert asyncio.run(judge.check_many(PREMISES, CLAIMS)) == expected(PREMISES, CLAIMS)
    assert asyncio.run(judge.extract("One fact. Two facts.")) == ["One fact.", "Two facts."]
    assert judge.stats.repairs == 0


def test_one_slot_server_brings_concurrency_down(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    # 0.15 s per request: well above what the client spends per call on a busy machine, so
    # the server is the bottleneck (as a real one is, at seconds per request).
    with LlamaCppPythonServer(service_time=0.15) as server:
        judge = get_judge("openai:q", base_url=server.url, max_concurrency=8,
                          strategy="per_premise")

        async def run() -> None:
            await asyncio.gather(*(judge.check(f"Premise {i}.", ["a claim"]) for i in range(24)))
        asyncio.run(run())
    _, lowest, ceiling = judge.stats.concurrency
    assert ceiling == 8 and lowest <= 2


def test_timeouts_against_a_one_slot_server_never_run_one_request_twice_at_once(monkeypatch):
    # One slot, 1 s per request, in order; the client waits 1.6 s. A second request sent
    # just after the first times out while it runs (1-2 s). Re-sent at once (no backoff
    # jitter here), it would run twice; it must wait until the server is past it.
    from noisegauge.infra import transport

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setattr(transport.random, "uniform", lambda low, high: 0.0)
    with LlamaCppPythonServer(service_time=1.0) as server:
        judge = get_judge("openai:q", base_url=server.url, max_concurrency=2, timeout=1.6,
                          strategy="per_premise", output_mode="json_object_schema")

        async def run() -> list[Any]:
            with metered() as usage:
                first = asyncio.ensure_future(judge.check("Premise 0.", ["a claim"]))
                while not server.arrived:
                    await asyncio.sleep(0.01)
                second = asyncio.ensure_future(judge.check("Premise 1.", ["a claim"]))
                found = await asyncio.gather(first, second, return_exceptions=True)
            assert usage.timeouts >= 1
            return list(found)
        results = asyncio.run(run())
        requests = {r.seq: r for r in server.chat_requests()}
        arrived, served = dict(server.arrived), list(server.served)
    assert all(not isinstance(r, Exception) for r in results), results
    ends = {seq: end for seq, _, end in served}
    copies: dict[str, list[int]] = {}
    for seq in sorted(arrived):
        copies.setdefault(requests[seq].first_user, []).append(seq)
    assert any(len(c) > 1 for c in copies.values())  # some were sent again...
    for seqs in copies.values():
        for i, earlier in enumerate(seqs):
            for later in seqs[i + 1:]:
                if earlier in ends:  # ...but never while an earlier copy was being worked on
                    assert arrived[later] >= ends[earlier] - 0.01


# -- fail fast: probe() ----------------------------------------------------------------------

def test_probe_costs_one_request_when_the_model_is_listed(fake_openai_server):
    asyncio.run(get_judge("openai:fake", base_url=fake_openai_server.url).probe())
    assert [r.path for r in fake_openai_server.requests] == []  # GET /models is not a POST
    assert fake_openai_server.chat_requests() == []


def test_probe_accepts_any_name_on_a_one_model_server(llama):
    asyncio.run(judge_for(llama).probe())  # llama-cpp-python serves its one model by any name
    (chat,) = llama.chat_requests()
    assert chat.body["max_tokens"] == 1


def test_probe_names_an_unknown_model_and_what_is_served(fake_openai_server):
    fake_openai_server.add_fault(status=404, body={"error": {
        "message": "The model `gpt-9` does not exist", "code": "model_not_found"}})
    with pytest.raises(JudgeUnavailable, match=r"404.*does not exist.*the server lists: fake"):
        asyncio.run(get_judge("openai:gpt-9", base_url=fake_openai_server.url).probe())


def test_probe_rejects_a_bad_key_without_showing_it(fake_openai_server, monkeypatch):
    fake_openai_server.api_key = "sk-right-000000000"
    secret = "sk-wrong-SECRET-12345678"
    judge = get_judge("openai:fake", base_url=fake_openai_server.url, api_key=secret)
    # The fake lists models without a key check; its chat route checks the key.
    monkeypatch.setattr(FakeOpenAIServer, "model_list", lambda self: {"data": []})
    with pytest.raises(JudgeUnavailable, match="401.*refused the API key") as info:
        asyncio.run(judge.probe())
    assert "SECRET" not in str(info.value)


def test_probe_of_an_unreachable_url_fails_at_once():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = get_judge("openai:m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(JudgeUnavailable, match="server running at that address"):
        asyncio.run(judge.probe())


def test_probe_timeout_names_the_endpoint_and_how_long():
    with socket.socket() as sock:  # accepts connections, never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        port = sock.getsockname()[1]
        judge = get_judge("openai:m", base_url=f"http://127.0.0.1:{port}/v1", timeout=0.5)
        with pytest.raises(JudgeUnavailable) as info:
            asyncio.run(judge.probe())
    assert str(info.value) == f"timed out after 0.5 s waiting for http://127.0.0.1:{port}/v1 (model m)"


def test_a_call_that_keeps_timing_out_says_where_and_how_long(fake_openai_server):
    fake_openai_server.add_fault(delay=2.0, times=5)
    judge = judge_for(fake_openai_server, timeout=0.3, max_retries=0)
    with metered() as usage, pytest.raises(JudgeUnavailable) as info:
        asyncio.run(judge.check(PREMISES[0], CLAIMS))
    assert str(info.value) == (f"timed out after 0.3 s waiting for {fake_openai_server.url} "
                               "(model qwen2.5-1.5b) (gave up after 1 attempt)")
    assert usage.timeouts == 1 and usage.failed_calls == 1 and usage.calls == 0


def test_an_answer_with_copied_example_ids_gets_a_correction_naming_the_right_ones(llama):
    # Real small models without a schema copy the prompt's example ids ("c1", "c2" under
    # every premise). Those are not guessed into verdicts; the re-ask says which ids to use.
    def copycat(request: FakeRequest, choice: int) -> str:
        right = judge_responder()(request, choice)
        if "not asked for" in request.last_user:
            return right
        return json.dumps({p: {"c1": "entailed", "c2": "neutral"} for p in json.loads(right)})
    llama.responder = copycat
    judge = judge_for(llama, output_mode="json_object")
    first, second = PREMISES[1], PREMISES[2]
    others = [PREMISES[0], PREMISES[3]]  # claims not among CLAIMS, so they get new ids

    async def run() -> list[list[list[Verdict]]]:
        with metered():  # one call: p1 lists c1 c2, p2 lists c3 c4
            return list(await asyncio.gather(judge.check_many([first], CLAIMS),
                                             judge.check_many([second], others)))
    one, two = asyncio.run(run())
    assert one == [[Verdict.ENTAILED, Verdict.NEUTRAL]]  # p1's ids were right: taken as given
    assert two == expected([second], others)             # p2's came from the re-ask
    asked, again = llama.chat_requests()
    assert asked.first_user.endswith("Judge:\np1: c1 c2\np2: c3 c4")
    assert "not asked for (p2/c1, p2/c2)" in again.last_user
    assert "p2: c3 c4" in again.last_user and judge.stats.repairs == 1


def test_the_judge_cache_keeps_the_raw_answers_without_the_key(fake_openai_server, tmp_path):
    from noisegauge.judges.cached import with_cache

    secret = "sk-raw-SECRET-123456789"
    fake_openai_server.api_key = secret
    fake_openai_server.add_fault(transform=lambda text: text + f" // {secret}")
    store = JudgeCache(tmp_path / "cache.sqlite3")
    judge = with_cache(get_judge("openai:m", base_url=fake_openai_server.url, api_key=secret),
                       store)
    assert asyncio.run(judge.check(PREMISES[1], CLAIMS)) == expected(PREMISES[1:2], CLAIMS)[0]
    (entry,) = [e for e in store.recent() if e.method == "check"]
    assert entry.raw and '"c1": "entailed"' in entry.raw[0]
    assert secret not in entry.raw[0] and entry.raw[0].endswith("// ***")
