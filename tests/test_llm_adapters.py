"""``llm=`` takes the clients users already hold, over real HTTP to the fake server.

Each path goes through its real client library (openai, langchain-openai, litellm) and must
give the same judge: same verdicts as ``openai:MODEL``, cache identity without the key,
tokens and cost accounted.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import Faithfulness, NoiseSensitivity, evaluate, get_judge
from noisegauge.judges.adapt import as_judge
from noisegauge.judges.llm.probe import PROBE_TEXT
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")
import openai  # noqa: E402  (after the skip: the extra is there)

KEY = "sk-test-adapters-0123456789"
ROWS = [
    {"id": "pro", "user_input": "What is the cancellation policy for the Pro plan?",
     "response": "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period.",
     "reference": "The Pro plan can be cancelled anytime. The Pro plan requires a 30-day notice period.",
     "retrieved_contexts": ["The Pro plan requires a 30-day notice period.",
                            "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period."]},
    {"id": "team", "user_input": "Where is Team plan data hosted?",
     "response": "Team plan data is hosted in Frankfurt.",
     "reference": "Team plan data is hosted in the EU region in Frankfurt.",
     "retrieved_contexts": ["Team plan data is hosted in the EU region in Frankfurt."]},
]


@pytest.fixture
def server(fake_openai_server: FakeOpenAIServer) -> FakeOpenAIServer:
    fake_openai_server.api_key = KEY
    return fake_openai_server


def _values(judge: Any) -> list[dict[str, Any]]:
    report = evaluate(ROWS, ["noise_sensitivity", "faithfulness", "precision"], judge=judge,
                      cache=False, progress=False)
    assert [r.status for r in report.results] == ["ok", "ok"], [r.reason for r in report.results]
    # the values and the claims and verdict matrices behind them
    return [{**{n: r.value(n) for n in report.metrics},
             "verdicts": r.verdicts.to_dict() if r.verdicts else None} for r in report.results]


@pytest.fixture
def reference(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    """What the plain ``openai:MODEL`` judge says on the same server."""
    values = _values(get_judge("openai:fake", base_url=server.url, api_key=KEY))
    server.requests.clear()
    return values


def _no_key_in(judge: Any) -> dict[str, Any]:
    ident = judge.identity()
    assert KEY not in json.dumps(ident, default=str)
    return ident


def test_async_and_sync_openai_clients(server: FakeOpenAIServer,
                                       reference: list[dict[str, Any]]) -> None:
    for client in (openai.AsyncOpenAI(base_url=server.url, api_key=KEY),
                   openai.OpenAI(base_url=server.url, api_key=KEY)):
        judge = as_judge(client, model="fake")
        assert _values(judge) == reference
        ident = _no_key_in(judge)
        assert ident["model"] == "fake" and ident["base_url"].startswith("http://127.0.0.1")
    assert server.chat_requests() and all(r.headers["authorization"] == f"Bearer {KEY}"
                                        for r in server.chat_requests())


def test_an_openai_client_needs_a_model(server: FakeOpenAIServer) -> None:
    with pytest.raises(TypeError, match="pass model="):
        as_judge(openai.AsyncOpenAI(base_url=server.url, api_key=KEY))


def test_azure_client_reaches_its_deployment(server: FakeOpenAIServer,
                                             reference: list[dict[str, Any]]) -> None:
    client = openai.AsyncAzureOpenAI(api_key=KEY, api_version="2024-06-01",
                                     azure_endpoint=server.url.removesuffix("/v1"),
                                     azure_deployment="fake-deployment")
    judge = NoiseSensitivity(llm=client, model="fake").judge
    assert _values(judge) == reference
    paths = {r.path.split("?")[0] for r in server.chat_requests()}
    assert paths == {"/openai/deployments/fake-deployment/chat/completions"}
    assert all(r.headers.get("api-key") == KEY for r in server.chat_requests())
    assert _no_key_in(judge)["via"] == "azure-openai"


def test_langchain_chat_openai(server: FakeOpenAIServer,
                               reference: list[dict[str, Any]]) -> None:
    lc = pytest.importorskip("langchain_openai", reason="pip install '.[langchain]'")
    model = lc.ChatOpenAI(model="fake", base_url=server.url, api_key=KEY, max_retries=0)
    judge = Faithfulness(llm=model).judge
    assert _values(judge) == reference
    ident = _no_key_in(judge)
    assert (ident["model"], ident["via"]) == ("fake", "langchain:ChatOpenAI")
    # structured output reached the server through LangChain
    assert any(r.mode != "text" for r in server.chat_requests())


def test_ragas_wrappers(server: FakeOpenAIServer,
                        reference: list[dict[str, Any]]) -> None:
    lc = pytest.importorskip("langchain_openai", reason="pip install '.[langchain]'")

    class LangchainLLMWrapper:  # ragas.llms.LangchainLLMWrapper's shape
        def __init__(self, langchain_llm: Any) -> None:
            self.langchain_llm = langchain_llm

    class InstructorLLM:  # what ragas.llms.llm_factory("fake", client=AsyncOpenAI()) returns
        def __init__(self, client: Any, model: str, provider: str) -> None:
            self.client = SimpleNamespace(client=client)  # instructor keeps the raw client
            self.model = model
            self.provider = provider

    wrapped = LangchainLLMWrapper(lc.ChatOpenAI(model="fake", base_url=server.url, api_key=KEY))
    assert _values(NoiseSensitivity(llm=wrapped).judge) == reference
    factory = InstructorLLM(openai.AsyncOpenAI(base_url=server.url, api_key=KEY), "fake", "openai")
    judge = NoiseSensitivity(llm=factory, mode="irrelevant").judge
    assert _values(judge) == reference
    assert _no_key_in(judge)["via"] == "openai-client"


def test_real_ragas_wrappers(server: FakeOpenAIServer,
                             reference: list[dict[str, Any]]) -> None:
    """The installed Ragas' own LangchainLLMWrapper and llm_factory results (skipped without
    Ragas; .ci/run has no Ragas, see there, so run it in a venv with `pip install ragas`)."""
    llms = pytest.importorskip("ragas.llms", reason="pip install '.[ragas]'")
    lc = pytest.importorskip("langchain_openai", reason="pip install '.[langchain]'")
    wrapped = llms.LangchainLLMWrapper(lc.ChatOpenAI(model="fake", base_url=server.url,
                                                     api_key=KEY, max_retries=0))
    assert _values(NoiseSensitivity(llm=wrapped).judge) == reference
    made = llms.llm_factory("fake", client=openai.AsyncOpenAI(base_url=server.url, api_key=KEY))
    judge = NoiseSensitivity(llm=made).judge
    assert _values(judge) == reference
    assert _no_key_in(judge)["model"] == "fake"


def test_litellm_model_string(server: FakeOpenAIServer,
                              reference: list[dict[str, Any]],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for its price list
    pytest.importorskip("litellm", reason="pip install '.[litellm]'")
    judge = get_judge("litellm:openai/fake", base_url=server.url, api_key=KEY)
    assert _values(judge) == reference
    ident = _no_key_in(judge)
    assert (ident["model"], ident["via"]) == ("openai/fake", "litellm")
    assert server.chat_requests()


def test_usage_and_cost_are_counted_through_an_adapter(server: FakeOpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=server.url, api_key=KEY)
    judge = as_judge(client, model="gpt-4o-mini")  # a model with a known price
    report = evaluate(ROWS[:1], ["faithfulness"], judge=judge, cache=False, progress=False)
    u = report.usage
    # The rows' calls; the run's one probe (before any row) is not a row's.
    asked = [r for r in server.chat_requests() if r.body["messages"][-1]["content"] != PROBE_TEXT]
    assert u.calls == len(asked) == len(server.chat_requests()) - 1 > 0
    assert u.prompt_tokens == sum(r.prompt_tokens for r in asked)
    assert u.cost_usd is not None and u.cost_usd > 0


def test_two_judges_from_one_client_share_a_cache_identity(server: FakeOpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=server.url, api_key=KEY)
    a, b = as_judge(client, model="fake"), as_judge(client, model="fake")
    assert a.identity() == b.identity()
    assert as_judge(client, model="other").identity() != a.identity()


def test_a_langchain_model_without_structured_output_reads_plain_text(
        server: FakeOpenAIServer, reference: list[dict[str, Any]]) -> None:
    core = pytest.importorskip("langchain_core.language_models.chat_models")
    messages = pytest.importorskip("langchain_core.messages")
    outputs = pytest.importorskip("langchain_core.outputs")

    class PlainChat(core.BaseChatModel):  # a provider LangChain knows, not OpenAI-shaped
        base_url: str
        model: str = "fake"

        @property
        def _llm_type(self) -> str:
            return "plain"

        def _generate(self, msgs: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:
            assert not kwargs  # nothing OpenAI-specific is passed to such a model
            sync = openai.OpenAI(base_url=self.base_url, api_key=KEY)
            chat = [{"role": {"human": "user", "ai": "assistant"}.get(m.type, m.type),
                     "content": m.content} for m in msgs]
            answer = sync.chat.completions.create(model=self.model, messages=chat)
            return outputs.ChatResult(generations=[outputs.ChatGeneration(
                message=messages.AIMessage(content=answer.choices[0].message.content or ""))])

    judge = as_judge(PlainChat(base_url=server.url))
    assert _values(judge) == reference
    assert {r.mode for r in server.chat_requests()} == {"text"}
    assert asyncio.iscoroutinefunction(judge.extract)
