"""``noisegauge leaks``: leak sources across a run, on corpora where the truth is known.

The corpora (``leak_corpus``) inject one document into every third sample and copy it into
the answers; a near-duplicate FAQ pair is confused on purpose. Everything is scored for real
(lexical judge, offline; the LLM judge against the fake OpenAI server).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import require_extra
from leak_corpus import INJECTED_ID, NAMES, TEXTS, corpus, injected, near_duplicates
from noisegauge import evaluate, get_judge
from noisegauge.cli.main import cli
from noisegauge.errors import JudgeUnavailable
from noisegauge.leaks import text_digest
from noisegauge.leaks.aggregate import tally
from noisegauge.report.data import iter_results
from noisegauge.testing import FakeOpenAIServer, FaultyJudge

KEYS = ["source", "leaked_claims", "samples", "retrieved", "irrelevant", "confused_with"]


def _score(rows: list[dict[str, Any]], out: Path, **kwargs: Any) -> Path:
    evaluate(rows, out=out, cache=False, progress=False, **kwargs)
    return out


def _leaks(results: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    out = results.with_suffix(".leaks.json")
    res = CliRunner().invoke(cli, ["leaks", str(results), "--json", str(out), *args],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("ids", [True, False], ids=["ids", "digest"])
def test_the_injected_document_ranks_first_with_its_count(tmp_path: Path, lang: str,
                                                          ids: bool) -> None:
    rows = corpus(lang, ids=ids)
    res, data = _leaks(_score(rows, tmp_path / "r.jsonl"), "--topk")
    want = [r["id"] for i, r in enumerate(rows) if injected(i)]
    first = data["sources"][0]
    assert list(first) == KEYS
    assert first["source"] == (INJECTED_ID if ids else text_digest(TEXTS[lang]["injected"]))
    assert first["leaked_claims"] == len(want) == 8
    assert first["samples"] == want
    assert first["retrieved"] == first["irrelevant"] == 8
    assert all(s["leaked_claims"] == 0 for s in data["sources"][1:])
    assert len(data["sources"]) == 1 + 2 * len(NAMES)  # every source, ranked
    ranked = [(-s["leaked_claims"], s["source"]) for s in data["sources"]]
    assert ranked == sorted(ranked)
    assert "1 source carries 100% of leaked claims (8 of 8)." in res.output
    assert "noisegauge stress" in res.output  # the caveat names the command that checks it
    assert [r["k"] for r in data["topk"]] == [1, 2, 3]


def test_a_near_duplicate_pair_is_reported_as_each_others_sibling(tmp_path: Path) -> None:
    _, data = _leaks(_score(near_duplicates(), tmp_path / "r.jsonl"))
    by = {s["source"]: s for s in data["sources"]}
    assert data["sources"][0]["source"] == "faq-refunds-2023"
    assert by["faq-refunds-2023"]["leaked_claims"] == 6  # 2 in 3 answers copy it
    assert by["faq-refunds-2023"]["confused_with"] == "faq-refunds"
    assert by["faq-refunds"]["confused_with"] == "faq-refunds-2023"
    assert by["faq-refunds"]["irrelevant"] == 0 and by["faq-refunds-2023"]["irrelevant"] == 9
    # A plan chunk came with the stale FAQ once: a partner, but no tie-free sibling of the FAQ.
    assert by["plan-alder"]["confused_with"] == "faq-refunds-2023"
    assert by["team-alder"]["confused_with"] is None  # irrelevant, never leaked


def test_top_limits_the_table_and_the_json(tmp_path: Path) -> None:
    res, data = _leaks(_score(corpus("en", ids=True), tmp_path / "r.jsonl"), "--top", "2")
    assert [s["source"] for s in data["sources"]] == [INJECTED_ID, "cat-alder"]
    assert "cat-birch" not in res.output


def test_results_without_sources_name_chunks_by_their_text(tmp_path: Path) -> None:
    """Results written before chunks carried a source: digests of the input's chunk texts."""
    results = _score(corpus("en", ids=False), tmp_path / "r.jsonl")
    _, new = _leaks(results)
    old = tmp_path / "old.jsonl"
    with old.open("w", encoding="utf-8") as fh:
        for row in iter_results(results):
            for c in row["chunks"]:
                c.pop("source"), c.pop("relevance_from")
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    assert _leaks(old)[1] == new
    bare = tmp_path / "bare.jsonl"  # no ids, no texts: counted as unknown, never guessed
    with bare.open("w", encoding="utf-8") as fh:
        for row in iter_results(old):
            row.pop("input")
            fh.write(json.dumps(row) + "\n")
    res, data = _leaks(bare)
    assert data["sources"] == []
    assert "24 of 24 scored rows carry neither chunk ids nor texts" in res.output


def test_a_file_that_is_not_results_exits_2(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["leaks", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such results file" in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"status": "ok", "metrics": {}, "chunks": []}\nnot json\n', encoding="utf-8")
    res = runner.invoke(cli, ["leaks", str(bad)])
    assert res.exit_code == 2 and "line 2: not JSON" in res.output
    good = tmp_path / "good.jsonl"
    good.write_text('{"status": "ok", "metrics": {}, "chunks": []}\n', encoding="utf-8")
    unwritable = runner.invoke(cli, ["leaks", str(good), "--json", str(bad / "x.json")])
    assert unwritable.exit_code == 2 and "is a file, not a folder" in unwritable.output


def test_the_same_table_from_the_llm_judge_and_a_resumed_run(tmp_path: Path) -> None:
    """Offline judge, LLM judge (fake server) and a run stopped and resumed: byte-identical
    leak tables (the JSON and the printed table)."""
    require_extra("openai")  # the LLM judge (a [dev]-only suite skips this test)
    rows = corpus("en", ids=False)
    for row in rows[16:]:
        row["response"] += " Zeta."
    plain = _score(rows, tmp_path / "plain.jsonl")
    with FakeOpenAIServer() as server:
        judge = get_judge("openai:fake", base_url=server.url, api_key="sk-test")
        llm = _score(rows, tmp_path / "llm.jsonl", judge=judge)
    resumed = tmp_path / "resumed.jsonl"
    broken = FaultyJudge(get_judge("lexical"), "Zeta", mode="fail")
    with pytest.raises(JudgeUnavailable):
        evaluate(rows, judge=broken, out=resumed, cache=False, progress=False, concurrency=1,
                 max_consecutive_failures=1)
    assert resumed.with_name(resumed.name + ".partial").exists()
    report = evaluate(rows, out=resumed, cache=False, progress=False)
    assert report.stats.resumed == 16
    outputs = []
    for results in (plain, llm, resumed):
        res, _ = _leaks(results, "--topk", "--examples", "3")
        # The first and last lines name the files read and written.
        outputs.append((results.with_suffix(".leaks.json").read_bytes(),
                        res.output.splitlines()[1:-1]))
    assert outputs[0] == outputs[1] == outputs[2]


def test_topk_figures_on_a_hand_checked_run() -> None:
    """Two samples; the figures below are worked out by hand from the evidence."""
    def row(rel: list[bool], ref_firsts: list[list[int]], leaks: list[list[int]],
            cp: float | None) -> dict[str, Any]:
        return {"status": "ok", "id": None, "metrics": {"context_precision": cp},
                "chunks": [{"index": j, "relevant": r, "source": f"c{j}"} for j, r in enumerate(rel)],
                "reference_claims": [{"entailed_by": e} for e in ref_firsts],
                "response_claims": [{"bucket": "irrelevant_noise", "leaked_from": lk,
                                     "text": "x"} for lk in leaks]}
    rows = [row([True, False, False], [[0], [2], []], [[1], [1, 2]], 1 / 3),
            row([False, True], [[1]], [[0]], 0.5)]
    t = tally(rows).topk
    assert [r.k for r in t] == [1, 2, 3]
    # claim recall: sample 1 covers 1/3, 1/3, 2/3; sample 2 covers 0, 1, 1 (it has 2 chunks)
    assert [r.claim_recall for r in t] == pytest.approx([1 / 6, 2 / 3, 5 / 6])
    assert [r.context_precision for r in t] == pytest.approx([0.5, 0.5, (1 / 3 + 0.5) / 2])
    # irrelevant chunks: ranks 1 and 2 in sample 1, rank 0 in sample 2: 3 in all
    assert [r.irrelevant_kept for r in t] == pytest.approx([1 / 3, 2 / 3, 1.0])
    # leaked claims' best leaking ranks: 1, 1, 0
    assert [r.leaks_dropped for r in t] == pytest.approx([2 / 3, 0.0, 0.0])


def test_the_report_has_a_sources_tab_linking_examples_to_samples(tmp_path: Path) -> None:
    from noisegauge.report import render_report

    rows = near_duplicates()
    rows[0]["retrieved_context_ids"][1] = "<script>alert(1)</script>"
    report = evaluate(rows, cache=False, progress=False)
    html = render_report(list(report.rows()), title="t")
    assert 'id="p-sources"' in html and 'data-tab="sources"' in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="#s=0"' in html  # an example claim opens its sample
    assert "What another top-k would have kept" in html and "noisegauge stress" in html
    assert 'class="chart curve lines"' in html


def test_topk_at_the_largest_k_is_the_runs_own_means() -> None:
    """Keeping every chunk changes nothing: the last row is the run's claim recall and
    context precision (samples with no chunk included, as the metrics include them)."""
    from batch_helpers import ROOT

    report = evaluate(str(ROOT / "examples" / "support_bot.jsonl"), cache=False, progress=False)
    rows = list(report.rows())
    assert any(not r["chunks"] and r["status"] == "ok" for r in rows)  # the case that matters
    last = tally(rows).topk[-1]
    summary = report.stats.summary()
    assert last.claim_recall == pytest.approx(summary["claim_recall"].mean)
    assert last.context_precision == pytest.approx(summary["context_precision"].mean)
    assert last.irrelevant_kept == 1.0 and last.leaks_dropped == 0.0
