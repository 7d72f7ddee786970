"""``noisegauge testset``: the command on the document folder, the generator path over the
fake OpenAI-compatible server, and bad input named in one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("bm25s", reason="noisegauge testset needs bm25s: pip install '.[testset]'")

from batch_helpers import require_extra
from noisegauge.cli.main import cli

DATA = Path(__file__).resolve().parent / "data" / "testset_docs"
DOCS = DATA / "docs"


def run(*args: str) -> tuple[int, str, list[dict]]:
    result = CliRunner().invoke(cli, ["testset", *args, "--no-cache"])
    return result.exit_code, result.output, []


def rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_questions_to_golden(tmp_path: Path) -> None:
    out = tmp_path / "golden.jsonl"
    code, text, _ = run(str(DOCS), "--questions", str(DATA / "questions.jsonl"), "--out", str(out))
    assert code == 0, text
    got = rows(out)
    assert [r["id"] for r in got] == ["lumen-1", "lumen-2", "lumen-3", "lumen-4"]
    assert got[0]["metadata"] == {"source": "questions", "team": "billing"}
    assert set(got[0]) >= {"id", "user_input", "reference", "retrieved_contexts",
                           "retrieved_context_ids", "distractors", "draft", "status"}
    assert "4 rows" in text and "noisegauge review" in text


def test_from_log_and_offline_template(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    code, text, _ = run(str(DOCS), "--from-log", str(DATA / "log.jsonl"), "--out", str(out))
    assert code == 0, text
    assert [r["draft"]["question"] for r in rows(out)] == ["log"] * 3
    code, text, _ = run(str(DOCS), "--n", "3", "--out", str(out))
    assert code == 0, text
    got = rows(out)
    assert len(got) == 3 and all(r["draft"]["question"] == "template" for r in got)


def test_generator_writes_questions_and_checked_references(tmp_path: Path) -> None:
    require_extra("openai")
    from noisegauge.testing.fake_openai import FakeOpenAIServer

    def respond(request, _choice):  # a generator that answers from passage A, like a model
        text = request.last_user
        if text.startswith("Write one question"):
            a = text.split("Passage A:\n", 1)[1].split("\n\nPassage B:", 1)[0]
            return "What does this say: " + a.split(".")[0] + "?"
        chunk = text.split("Passages:\n", 1)[1]
        return chunk.split(". ")[0].rstrip(".") + "."

    out = tmp_path / "g.jsonl"
    with FakeOpenAIServer(responder=respond) as server:
        code, text, _ = run(str(DOCS), "--n", "2", "--generator", "openai:fake-writer",
                            "--generator-base-url", server.url, "--generator-api-key", "sk-x",
                            "--out", str(out))
        asked = [r.last_user for r in server.chat_requests()]
    assert code == 0, text
    got = rows(out)
    assert len(got) == 2
    for r in got:
        assert r["draft"]["question"] == "openai:fake-writer"
        assert r["draft"]["method"] == "openai:fake-writer"  # entailed by the chunk: kept
        assert r["reference"] in r["retrieved_contexts"][0]
    assert sum(a.startswith("Write one question") for a in asked) == 2
    assert sum(a.startswith("Answer the question") for a in asked) == 2


def test_a_generated_reference_the_chunk_does_not_entail_is_not_kept(tmp_path: Path) -> None:
    require_extra("openai")
    from noisegauge.testing.fake_openai import FakeOpenAIServer

    out = tmp_path / "g.jsonl"
    q = tmp_path / "q.txt"
    q.write_text("How many days does a Pro plan customer have to ask for a full refund?\n",
                 encoding="utf-8")
    with FakeOpenAIServer(responder=lambda r, c: "Refunds take ninety weeks via carrier pigeon.") \
            as server:
        code, text, _ = run(str(DOCS), "--questions", str(q), "--generator", "openai:w",
                            "--generator-base-url", server.url, "--out", str(out))
    assert code == 0, text
    (r,) = rows(out)
    assert r["draft"]["method"] == "extractive" and "30 days" in r["reference"]
    assert "not entailed" in r["reason"]


@pytest.mark.parametrize("make, args, fix", [
    (lambda d: d.mkdir(), [], "the corpus is empty"),
    (lambda d: (d.mkdir(), (d / "x.md").write_bytes(b"\x00\x00bin")), [], "binary file"),
    (lambda d: (d.mkdir(), (d / "x.jsonl").write_text(
        '{"id": "a", "text": "alpha beta gamma"}\n{"id": "a", "text": "delta epsilon"}\n')),
     [], "duplicate chunk id 'a'"),
    (lambda d: None, [], "no such file or folder"),
    (lambda d: (d.mkdir(), (d / "q.jsonl").write_text('{"id": "1", "user_input": "a?"}\n'
                                                      '{"id": "1", "user_input": "b?"}\n')),
     ["--questions", "{d}/q.jsonl"], "duplicate id '1'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, make, args, fix: str) -> None:
    d = tmp_path / "docs"
    make(d)
    given = [a.replace("{d}", str(d)) for a in args]
    docs = [str(d)] if "--questions" not in args else [str(DOCS)]
    code, text, _ = run(*docs, *given, "--out", str(tmp_path / "g.jsonl"))
    assert code == 2, text
    assert fix in text and "Traceback" not in text
    assert not (tmp_path / "g.jsonl").exists()


def test_out_may_not_overwrite_an_input(tmp_path: Path) -> None:
    q = tmp_path / "q.txt"
    q.write_text("How much storage does a Team plan account include?\n", encoding="utf-8")
    code, text, _ = run(str(DOCS), "--questions", str(q), "--out", str(q))
    assert code == 2 and "would overwrite" in text
    assert q.read_text(encoding="utf-8").startswith("How much")


def test_an_openai_judge_checks_the_traps(tmp_path: Path) -> None:
    require_extra("openai")
    from noisegauge.testing.fake_openai import FakeOpenAIServer

    out = tmp_path / "g.jsonl"
    q = tmp_path / "q.txt"
    q.write_text("How many days does a Pro plan customer have to ask for a full refund?\n",
                 encoding="utf-8")
    with FakeOpenAIServer() as server:  # answers the judge's prompts by word overlap
        code, text, _ = run(str(DOCS), "--questions", str(q), "--judge", "openai:fake-judge",
                            "--judge-base-url", server.url, "--judge-api-key", "sk-test",
                            "--out", str(out))
        checked = len(server.chat_requests())
    assert code == 0, text
    (r,) = rows(out)
    assert r["draft"]["judge"] == "openai:fake-judge" and checked > 0
    # no trap holds the answer by this judge's verdicts: it entails not every reference claim
    from noisegauge.testing.fake_openai import overlap_verdict
    from noisegauge.textkit.sentences import sentences

    claims = sentences(r["reference"])
    assert r["distractors"]
    for d in r["distractors"]:
        assert not all(overlap_verdict(d["text"], c) == "entailed" for c in claims), d["id"]
