"""Answer Relevancy with the LLM judge (questions in the extraction call) and with an
OpenAI-compatible embeddings endpoint, over real HTTP to the fake server."""

from __future__ import annotations

from pathlib import Path

from batch_helpers import require_extra
from noisegauge import AnswerRelevancy, NoiseSensitivity, evaluate, get_judge
from noisegauge.embeddings import get_embedder
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")

ROW = {"user_input": "Can the Pro plan be cancelled anytime?",
       "response": "The Pro plan can be cancelled anytime. It needs 30 days of notice.",
       "reference": "The Pro plan can be cancelled anytime with 30 days of notice.",
       "retrieved_contexts": ["The Pro plan can be cancelled anytime with 30 days of notice."]}
REFUSAL = {**ROW, "response": "Sorry, I don't have information about that."}


def _run(server: FakeOpenAIServer, rows: list[dict[str, object]], with_ar: bool,
         cache: object = False) -> tuple[object, int]:
    judge = get_judge("openai:fake", base_url=server.url, api_key="sk-test")
    metrics = [NoiseSensitivity(judge=judge)]
    if with_ar:
        metrics.append(AnswerRelevancy(judge=judge, embeddings="hashing"))
    before = len(server.chat_requests())
    report = evaluate(rows, metrics, cache=cache, progress=False)  # type: ignore[arg-type]
    return report, len(server.chat_requests()) - before


def test_the_llm_writes_the_questions_in_its_extraction_call(
        fake_openai_server: FakeOpenAIServer) -> None:
    plain, calls_plain = _run(fake_openai_server, [ROW], with_ar=False)
    report, calls = _run(fake_openai_server, [ROW], with_ar=True)
    assert calls == calls_plain == 2  # one extraction and one check call, with or without AR
    extraction = [r for r in fake_openai_server.chat_requests() if "Ask: " in r.first_user]
    assert len(extraction) == 1 and "Ask: t1=3" in extraction[0].first_user
    result = report.results[0]  # type: ignore[attr-defined]
    ev = result.relevancy
    assert ev is not None and ev.source == "judge" and not ev.noncommittal
    assert ev.questions == ("Can the Pro plan be cancelled anytime?",
                            "Does it need 30 days of notice?")
    assert result.value("answer_relevancy") > 0.5
    # the other metrics are what they were without the questions
    assert result.value("noise_sensitivity_relevant") == \
        plain.results[0].value("noise_sensitivity_relevant")  # type: ignore[attr-defined]


def test_the_llm_says_non_committal(fake_openai_server: FakeOpenAIServer) -> None:
    report, _ = _run(fake_openai_server, [REFUSAL], with_ar=True)
    result = report.results[0]  # type: ignore[attr-defined]
    assert result.value("answer_relevancy") == 0.0
    assert result.relevancy.source == "judge" and result.relevancy.noncommittal


def test_asked_extractions_are_cached(fake_openai_server: FakeOpenAIServer,
                                      tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"
    first, calls = _run(fake_openai_server, [ROW], with_ar=True, cache=cache)
    again, calls_again = _run(fake_openai_server, [ROW], with_ar=True, cache=cache)
    assert calls == 2 and calls_again == 0
    assert again.results[0].relevancy == first.results[0].relevancy  # type: ignore[attr-defined]


def test_embeddings_from_an_openai_compatible_endpoint(
        fake_openai_server: FakeOpenAIServer) -> None:
    embedder = get_embedder("openai:text-embedding-3-small", base_url=fake_openai_server.url,
                            api_key="sk-test")
    assert embedder.identity() == {"embedder": "openai", "model": "text-embedding-3-small",
                                   "base_url": fake_openai_server.url}
    metric = AnswerRelevancy(judge="fake", embeddings=embedder)
    report = evaluate([ROW], [metric], cache=False, progress=False)
    asked = [r for r in fake_openai_server.requests if r.path == "/v1/embeddings"]
    assert len(asked) == 1 and asked[0].body["input"][0] == ROW["user_input"]
    assert report.results[0].value("answer_relevancy") > 0.5
    usage = report.usage
    assert usage.calls >= 1 and usage.prompt_tokens > 0 and usage.cost_usd is not None
