"""The public surface is pinned, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import noisegauge

CONTRACT_NAMES = {"NoiseSensitivity", "evaluate", "aevaluate", "get_judge", "Sample", "Verdict"}


def test_contract_names_are_exported() -> None:
    assert set(noisegauge.__all__) >= CONTRACT_NAMES
    for name in noisegauge.__all__:
        if name not in {"evaluate", "aevaluate", "Report"}:  # lazily imported
            assert hasattr(noisegauge, name), name


def test_import_does_not_pull_heavy_dependencies() -> None:
    code = ("import sys, noisegauge; heavy = [m for m in ('numpy', 'torch', 'openai', 'pandas', "
            "'transformers', 'pyarrow') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_verdict_is_a_str_enum() -> None:
    assert noisegauge.Verdict("entailed") == "entailed"
    assert {v.value for v in noisegauge.Verdict} == {"entailed", "neutral", "contradicted"}
