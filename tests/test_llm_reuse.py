"""Any LLM object users pass works in any number of calls, in any order (issue 22, item 4).

The notebook pattern: evaluate, change something, evaluate again, with the same
``ChatOpenAI``; ``evaluate`` after ``asyncio.run(metric.ascore(...))``; ``evaluate`` from a
thread while another event loop runs (Jupyter). Each kind of LLM object goes through a
sequence of calls that holds every ordered pair of call kinds (so each kind twice in a row,
and each after each other), over real HTTP to the fake OpenAI server, cache off so that
every call really sends requests.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import NoiseSensitivity, aevaluate, evaluate, get_judge
from noisegauge.errors import SyncInAsyncError
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")
import openai  # noqa: E402  (after the skip: the extra is there)

KEY = "sk-test-reuse-0123456789"
ROW = {"id": "pro", "user_input": "What is the cancellation policy for the Pro plan?",
       "response": "The Pro plan can be cancelled anytime. It requires a 90-day notice period.",
       "reference": "The Pro plan can be cancelled anytime. It requires a 30-day notice period.",
       "retrieved_contexts": ["The Pro plan requires a 30-day notice period.",
                              "The Pro plan can be cancelled anytime."]}
KINDS = ("evaluate", "aevaluate", "ascore", "score", "thread")


def every_pair(n: int) -> list[int]:
    """A walk through 0..n-1 that takes every ordered pair (i, j), i == j included, once
    (an Euler circuit of the complete digraph with loops)."""
    left = {i: list(range(n)) for i in range(n)}
    stack, walk = [0], []
    while stack:
        if left[stack[-1]]:
            stack.append(left[stack[-1]].pop())
        else:
            walk.append(stack.pop())
    return walk[::-1]


def _call(kind: str, metric: NoiseSensitivity) -> str:
    """One call of ``kind``; the row's status."""
    rows = [ROW]
    if kind == "evaluate":
        return evaluate(rows, metrics=[metric], cache=False, progress=False).results[0].status
    if kind == "aevaluate":
        report = asyncio.run(aevaluate(rows, metrics=[metric], cache=False, progress=False))
        return report.results[0].status
    if kind == "ascore":
        return asyncio.run(metric.ascore(ROW)).status
    if kind == "score":
        return metric.score(ROW).status

    async def notebook() -> str:  # a cell's loop is running; the sync call goes to a thread
        with pytest.raises(SyncInAsyncError, match="await"):
            evaluate(rows, metrics=[metric], cache=False, progress=False)
        report = await asyncio.to_thread(evaluate, rows, metrics=[metric], cache=False,
                                         progress=False)
        return report.results[0].status

    return asyncio.run(notebook())


def _azure(cls: Any, url: str) -> Any:
    return cls(api_key=KEY, api_version="2024-06-01", azure_endpoint=url.removesuffix("/v1"),
               azure_deployment="fake-deployment")


def _langchain(url: str) -> Any:
    lc = pytest.importorskip("langchain_openai", reason="pip install '.[langchain]'")
    return lc.ChatOpenAI(model="fake", base_url=url, api_key=KEY, max_retries=0)


def _litellm(url: str) -> Any:
    pytest.importorskip("litellm", reason="pip install '.[litellm]'")
    return get_judge("litellm:openai/fake", base_url=url, api_key=KEY)


class LangchainLLMWrapper:  # ragas.llms.LangchainLLMWrapper's shape
    def __init__(self, langchain_llm: Any) -> None:
        self.langchain_llm = langchain_llm


class InstructorLLM:  # what ragas.llms.llm_factory("fake", client=AsyncOpenAI()) returns
    def __init__(self, client: Any, model: str) -> None:
        self.client = SimpleNamespace(client=client)
        self.model = model
        self.provider = "openai"


#: name -> (the object from the server's URL, whether it is a judge rather than an llm=).
OBJECTS: dict[str, Callable[[str], tuple[Any, dict[str, Any]]]] = {
    "openai-sync": lambda u: (openai.OpenAI(base_url=u, api_key=KEY), {"model": "fake"}),
    "openai-async": lambda u: (openai.AsyncOpenAI(base_url=u, api_key=KEY), {"model": "fake"}),
    "azure-sync": lambda u: (_azure(openai.AzureOpenAI, u), {"model": "fake-deployment"}),
    "azure-async": lambda u: (_azure(openai.AsyncAzureOpenAI, u), {"model": "fake-deployment"}),
    "langchain": lambda u: (_langchain(u), {}),
    "litellm": lambda u: (_litellm(u), {"judge": True}),
    "ragas-langchain": lambda u: (LangchainLLMWrapper(_langchain(u)), {}),
    "ragas-factory": lambda u: (InstructorLLM(openai.AsyncOpenAI(base_url=u, api_key=KEY),
                                              "fake"), {}),
}


@pytest.mark.parametrize("name", list(OBJECTS))
def test_one_llm_object_in_every_order_of_calls(name: str,
                                                fake_openai_server: FakeOpenAIServer,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for its prices
    server = fake_openai_server
    server.api_key = KEY
    obj, options = OBJECTS[name](server.url)
    metric = (NoiseSensitivity(judge=obj) if options.pop("judge", False)
              else NoiseSensitivity(llm=obj, **options))
    walk = [KINDS[i] for i in every_pair(len(KINDS))]
    assert len(set(itertools.pairwise(walk))) == len(KINDS) ** 2
    for step, kind in enumerate(walk):
        before = len(server.chat_requests())
        status = _call(kind, metric)
        assert status == "ok", f"call {step} ({kind}, after {walk[step - 1] if step else '-'})"
        assert len(server.chat_requests()) > before, f"call {step} ({kind}) sent nothing"
