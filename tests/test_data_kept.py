"""The user's data is written exactly as it was read (issue 22, item 1): only the secret
values the process knows are masked, never text that merely looks like a key.

The bundled example has ids such as ``sb25-sk-prorated-no-context``; a SKU ``sk-2041-blue``
and a ``Bearer`` phrase are added in a response, a chunk and the metadata. Every id and text
must come back unchanged in ``results.jsonl`` and in the HTML report's data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from noisegauge.cli.main import cli
from noisegauge.infra import secrets
from report_helpers import data_block

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
SKU = "sk-2041-blue-widget-XL"
BEARER = "Bearer tokens-are-just-words-here"


def _rows() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    extra = dict(rows[0], id=f"sb99-{SKU}")
    extra["response"] = f"Order {SKU} ships in 3 days. {BEARER}."
    extra["retrieved_contexts"] = [*rows[0]["retrieved_contexts"], f"Stock list: {SKU} (3 left)."]
    extra["metadata"] = {"sku": SKU}
    return [*rows, extra]


@pytest.fixture(autouse=True)
def _own_registry() -> Any:
    """Only this test's secrets count (other tests in the process register theirs, e.g.
    "Bearer t", which would then be masked in our data as a known value)."""
    saved = set(secrets._registered)
    secrets._registered.clear()
    secrets._env = None
    yield
    secrets._registered.clear()
    secrets._registered.update(saved)
    secrets._env = None


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], Path]:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-not-in-the-data-123")  # a known secret
    rows = _rows()
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    res = CliRunner().invoke(cli, ["score", str(src), "--out", str(tmp_path / "results.jsonl"),
                                   "--report", str(tmp_path / "report.html"), "-q"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert sum("sk-" in r["id"] for r in rows) == 3  # the example's two, and ours
    return rows, tmp_path


def test_results_and_report_keep_every_id_and_text(scored: tuple[list[dict[str, Any]], Path]) -> None:
    rows, out = scored
    written = [json.loads(line) for line in
               (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [w["id"] for w in written] == [r["id"] for r in rows]
    for row, w in zip(rows, written, strict=True):
        for field in ("user_input", "response", "reference", "retrieved_contexts", "metadata"):
            assert w["input"][field] == row[field], (row["id"], field)
    claims = " ".join(c["text"] for c in written[-1]["response_claims"])
    assert SKU in claims and "***" not in claims
    assert SKU.encode() in (out / "results.jsonl").read_bytes()
    # The HTML report's data: the same ids, questions, answers, references and chunks.
    data = json.loads(data_block((out / "report.html").read_text(encoding="utf-8")))
    samples = data["samples"]
    assert [s["id"] for s in samples] == [r["id"] for r in rows]
    for row, s in zip(rows, samples, strict=True):
        assert (s["q"], s["a"], s["r"]) == (row["user_input"], row["response"], row["reference"])
    assert all(c in data["chunks"] for r in rows for c in r["retrieved_contexts"])
    assert "***" not in (out / "report.html").read_text(encoding="utf-8")
