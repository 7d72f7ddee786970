"""Pipelines: extractive baseline, callables (sync/async), an HTTP JSON service; the runner's
concurrency limit, retries and generation cache."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from noisegauge.errors import InvalidInput
from noisegauge.stress import GenerationCache, Generator, get_pipeline
from noisegauge.stress.extractive import NO_ANSWER, ExtractivePipeline, key_entities
from noisegauge.stress.remote import json_path, render_prompt

PRO = "Pro plan subscriptions can be cancelled with 30 days' notice."
ENT = "Enterprise plan subscriptions can be cancelled with 90 days' notice."
Q = "How much notice is needed to cancel Pro plan subscriptions?"


def first_context(question: str, contexts: list[str]) -> str:
    return contexts[0] if contexts else ""


async def async_last_context(question: str, contexts: list[str]) -> str:
    await asyncio.sleep(0)
    return contexts[-1]


def test_extractive_copies_a_topically_close_distractor() -> None:
    pipe = ExtractivePipeline()
    assert pipe.answer(Q, [PRO]) == PRO
    leaked = pipe.answer(Q, [PRO, ENT])
    assert PRO in leaked and ENT in leaked  # the naive baseline leaks noise, by design
    assert pipe.answer("What colour is the sky?", [PRO]) == NO_ANSWER


def test_extractive_strict_keeps_only_sentences_about_the_key_entity() -> None:
    assert key_entities(Q) == {"pro"}
    assert key_entities("DK-310 도크는 몇 대를 지원하나요?") == {"dk-310"}
    assert ExtractivePipeline(strict=True).answer(Q, [ENT, PRO]) == PRO
    # Without an entity in the question, strict cannot filter and behaves like the default.
    plain = "How much notice is needed to cancel subscriptions?"
    assert ExtractivePipeline(strict=True).answer(plain, [PRO, ENT]) == \
        ExtractivePipeline().answer(plain, [PRO, ENT])


def test_extractive_handles_korean_particles() -> None:
    ko = "Pro 월간 플랜 요금은 결제일로부터 14일 이내에 환불을 요청할 수 있습니다."
    other = "배송은 영업일 기준 3일이 걸립니다."
    assert ExtractivePipeline().answer("Pro 월간 플랜은 며칠 안에 환불받을 수 있나요?", [other, ko]) == ko


def test_callable_specs_sync_and_async() -> None:
    sync = get_pipeline(f"{__name__}:first_context")
    asy = get_pipeline(f"{__name__}:async_last_context")
    assert asyncio.run(sync.generate("q", ["a", "b"])) == "a"
    assert asyncio.run(asy.generate("q", ["a", "b"])) == "b"
    direct = get_pipeline(async_last_context)
    assert asyncio.run(direct.generate("q", ["x", "y"])) == "y"
    ident = sync.identity()  # type: ignore[attr-defined]
    assert ident["target"] == f"{__name__}:first_context" and ident["source_sha256"]


def test_bad_specs_and_misplaced_options_are_rejected() -> None:
    with pytest.raises(InvalidInput, match="cannot import"):
        get_pipeline("no_such_module_xyz:fn")
    with pytest.raises(InvalidInput, match="no attribute"):
        get_pipeline(f"{__name__}:missing")
    with pytest.raises(InvalidInput, match="unknown pipeline"):
        get_pipeline("extractivee")
    with pytest.raises(InvalidInput, match="answer_path"):
        get_pipeline("openai:m", answer_path="x")
    with pytest.raises(InvalidInput, match="needs a model"):
        get_pipeline("openai:")


def test_a_callable_returning_a_non_string_is_an_error_row_not_a_crash() -> None:
    gen = Generator(get_pipeline(lambda q, c: 42), retries=0)
    result = asyncio.run(gen.generate("q", ["c"]))
    assert result.answer is None and "int" in (result.error or "")


class Flaky:
    """Fails with a transient error ``fail`` times, then answers; records concurrency."""

    def __init__(self, fail: int, exc: type[Exception] = ConnectionError) -> None:
        self.fail, self.exc, self.calls, self.active, self.peak = fail, exc, 0, 0, 0

    def identity(self) -> dict[str, Any]:
        return {"pipeline": "flaky"}

    def should_retry(self, exc: BaseException) -> bool:
        return isinstance(exc, ConnectionError)

    async def generate(self, question: str, contexts: Sequence[str]) -> str:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        if self.calls <= self.fail:
            raise self.exc("down")
        return f"answer to {question}"


def test_transient_failures_are_retried_and_others_are_not() -> None:
    flaky = Flaky(fail=2)
    g = asyncio.run(Generator(flaky, retries=2, backoff=0).generate("q", ["c"]))
    assert (g.answer, g.attempts, flaky.calls) == ("answer to q", 3, 3)
    broken = Flaky(fail=5, exc=ValueError)
    g = asyncio.run(Generator(broken, retries=2, backoff=0).generate("q", ["c"]))
    assert g.answer is None and g.error == "ValueError: down" and broken.calls == 1


def test_concurrency_limit_holds() -> None:
    pipe = Flaky(fail=0)

    async def run() -> None:
        gen = Generator(pipe, concurrency=3)
        await asyncio.gather(*(gen.generate(f"q{i}", ["c"]) for i in range(12)))

    asyncio.run(run())
    assert pipe.calls == 12 and pipe.peak == 3


def test_generation_cache_replays_answers_and_keys_on_identity(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "gen.sqlite")
    pipe = Flaky(fail=0)

    async def ask(p: Any, q: str, ctx: list[str]) -> Any:
        return await Generator(p, cache=cache).generate(q, ctx)

    first = asyncio.run(ask(pipe, "q", ["a", "b"]))
    again = asyncio.run(ask(pipe, "q", ["a", "b"]))
    reordered = asyncio.run(ask(pipe, "q", ["b", "a"]))
    assert (first.cached, again.cached, reordered.cached) == (False, True, False)
    assert again.answer == first.answer and pipe.calls == 2

    class Other(Flaky):
        def identity(self) -> dict[str, Any]:
            return {"pipeline": "flaky", "model": "other"}

    other = Other(fail=0)
    assert asyncio.run(ask(other, "q", ["a", "b"])).cached is False and other.calls == 1
    cache.close()


# --- an existing RAG service speaking JSON, served by http.server -----------------------------

class _Handler(BaseHTTPRequestHandler):
    fail_first = 0
    bodies: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append({"body": body, "auth": self.headers.get("Authorization")})
        if len(type(self).bodies) <= type(self).fail_first:
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b"busy")
            return
        if body.get("mode") == "bad":
            self.send_response(400)
            self.end_headers()
            return
        ctx = body["input"]["docs"]
        payload = {"data": {"choices": [{"text": f"{body['input']['q']} -> {ctx[-1]}"}]}}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def rag_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # a CI proxy must not intercept
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    _Handler.fail_first = 0
    _Handler.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/rag"
    server.shutdown()
    server.server_close()


TEMPLATE = '{"input": {"q": "Q: {question}", "docs": "{contexts}"}, "mode": "byo-context"}'


def test_http_json_pipeline_fills_the_template_and_reads_the_path(rag_service: str) -> None:
    pipe = get_pipeline(rag_service, request_template=TEMPLATE,
                        answer_path="data.choices.0.text", headers={"Authorization": "Bearer t"})
    answer = asyncio.run(pipe.generate("refund?", ["c1", "c2"]))
    assert answer == "Q: refund? -> c2"
    sent = _Handler.bodies[-1]
    assert sent["body"] == {"input": {"q": "Q: refund?", "docs": ["c1", "c2"]}, "mode": "byo-context"}
    assert sent["auth"] == "Bearer t"
    assert "Bearer t" not in json.dumps(pipe.identity())  # type: ignore[attr-defined]


def test_http_json_pipeline_retries_5xx_but_not_4xx(rag_service: str) -> None:
    _Handler.fail_first = 2
    pipe = get_pipeline(rag_service, request_template=TEMPLATE, answer_path="data.choices.0.text")
    g = asyncio.run(Generator(pipe, retries=2, backoff=0).generate("q", ["c"]))
    assert g.answer == "Q: q -> c" and g.attempts == 3
    bad = get_pipeline(rag_service, request_template='{"mode": "bad"}')
    g = asyncio.run(Generator(bad, retries=2, backoff=0).generate("q", ["c"]))
    assert g.answer is None and "HTTP 400" in (g.error or "") and g.attempts == 1


def test_http_json_pipeline_names_a_wrong_answer_path(rag_service: str) -> None:
    pipe = get_pipeline(rag_service, request_template=TEMPLATE, answer_path="data.answer")
    g = asyncio.run(Generator(pipe, retries=0).generate("q", ["c"]))
    assert "answer path 'data.answer'" in (g.error or "") and "choices" in (g.error or "")


def test_json_path_and_prompt_rendering() -> None:
    assert json_path({"a": [{"b": "x"}]}, "a.0.b") == "x"
    with pytest.raises(KeyError):
        json_path({"a": []}, "a.0")
    text = render_prompt('{"q": "{question}"}\n{contexts}', "why?", ["one", "two"])
    assert text == '{"q": "why?"}\n[1] one\n[2] two'


def test_generation_cache_answers_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "gen.sqlite"
    cache = GenerationCache(path)
    cache.put("k", "an answer")
    cache.flush()
    assert GenerationCache(path).get("k") == "an answer"
    assert GenerationCache(path).get("missing") is None
