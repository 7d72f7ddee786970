"""The stress figures the docs quote (docs/how-to/stress.md) are what the commands they name
print today.

The numbers are read out of the page's text (the table under "Stress testing" and the
sentence on harder distractors), and the sweeps are run here: a change to the judge, the
pipeline or the injection that moves a figure fails this test until the page says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "docs" / "how-to" / "stress.md").read_text(encoding="utf-8")
GOLDEN = str(ROOT / "examples" / "golden_support.jsonl")
POOL = str(ROOT / "examples" / "distractor_pool.jsonl")


def _curve(tmp_path: Path, *args: str, golden: str = GOLDEN) -> dict[str, dict[int, str]]:
    """``noisegauge stress GOLDEN --pipeline extractive ARGS``: metric -> level -> '0.123'."""
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["stress", golden, "--pipeline", "extractive",
                                   "--levels", "0,1,2,4", "--out", str(out), *args])
    assert res.exit_code == 0, res.output
    curve = json.loads((out / "curve.json").read_text())
    return {name: {p["level"]: f"{p['mean']:.3f}" for p in points}
            for name, points in curve["metrics"].items()}


def test_the_stress_table_is_what_the_default_sweep_prints(tmp_path: Path) -> None:
    table = README[README.index("| injected distractors | 0 | 1 | 2 | 4 |"):]
    rows = re.findall(r"^\| (\w+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
                      table[:table.index("\n\n")], re.M)
    assert {r[0] for r in rows} == {"noise_sensitivity_irrelevant", "noise_sensitivity_relevant",
                                    "precision"}
    curve = _curve(tmp_path)
    for name, *quoted in rows:
        assert [curve[name][k] for k in (0, 1, 2, 4)] == quoted, name


_HARD = re.compile(r"--strategy hard --pool examples/distractor_pool\.jsonl`\s+irrelevant-mode "
                   r"noise sensitivity is ([\d.]+) / ([\d.]+) / ([\d.]+) at 1 / 2 / 4")
_COUNTER = re.compile(r"`--strategy counterfactual`\s+([\d.]+) / ([\d.]+) / ([\d.]+)\s+"
                      r"\(relevant mode up to ([\d.]+)")


def test_the_counterfactual_figures_are_what_that_sweep_prints(tmp_path: Path) -> None:
    quoted = _COUNTER.search(README)
    assert quoted, "docs/how-to/stress.md: the counterfactual sentence changed shape; update this test"
    curve = _curve(tmp_path, "--strategy", "counterfactual")
    assert [curve["noise_sensitivity_irrelevant"][k] for k in (1, 2, 4)] == list(quoted.groups()[:3])
    assert max(curve["noise_sensitivity_relevant"].values()) == quoted[4]


def test_the_hard_negative_figures_are_what_that_sweep_prints(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="pip install '.[stress]'")
    quoted = _HARD.search(README)
    assert quoted, "docs/how-to/stress.md: the hard-negative sentence changed shape; update this test"
    curve = _curve(tmp_path, "--strategy", "hard", "--pool", POOL)
    assert [curve["noise_sensitivity_irrelevant"][k] for k in (1, 2, 4)] == list(quoted.groups())


_SIBLINGS = re.compile(r"`--strategy siblings` gives\s+irrelevant-mode noise sensitivity ([\d.]+) / "
                       r"([\d.]+) / ([\d.]+) at 1 / 2 / 4 distractors, against\s+([\d.]+) / ([\d.]+) / "
                       r"([\d.]+) with `--strategy others`")


def test_the_siblings_figures_are_what_those_sweeps_print(tmp_path: Path) -> None:
    quoted = _SIBLINGS.search(README)
    assert quoted, "docs/how-to/stress.md: the siblings sentence changed shape; update this test"
    fixture = str(ROOT / "tests" / "data" / "golden" / "golden_siblings.jsonl")
    got = []
    for strategy in ("siblings", "others"):
        curve = _curve(tmp_path / strategy, "--strategy", strategy, golden=fixture)
        got += [curve["noise_sensitivity_irrelevant"][k] for k in (1, 2, 4)]
    assert got == list(quoted.groups())
