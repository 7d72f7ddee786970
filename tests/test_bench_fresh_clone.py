"""Benches run in a fresh clone, where ``../shared`` is absent: on the bundled data, saying
so (#30: ``bench/llm_cost.py`` stopped with FileNotFoundError without ``../shared``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from batch_helpers import require_extra

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_llm_cost_without_shared_runs_on_the_bundled_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    require_extra("openai")
    bench = _bench("llm_cost")
    monkeypatch.setattr(bench, "SHARED", tmp_path / "shared")  # as in a fresh clone
    assert bench.main(["--latency", "0", "--batch", "2", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'shared'} not found: the LIC example from " \
        "tests/data/ragas/noise_sensitivity_docs_examples.json, and " \
        "examples/support_bot.jsonl as the data." in out
    assert "== LIC: 1 sample(s)" in out and "== support_bot.jsonl: 29 sample(s)" in out
    assert out.count("Ragas (simulated)") == 2
