"""``stress`` and ``compare`` messages and exit codes: literal text (``[plot]`` survives),
Ctrl-C as exit 130 with a true word about what was kept, an unwritable --out refused before
any work, whole tables on a pipe, --timeout/--max-retries reaching a remote judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT
from noisegauge.cli.main import cli
from noisegauge.cli.stress import _run_kwargs
from noisegauge.errors import MissingDependency

GOLDEN = ROOT / "examples" / "golden_support.jsonl"


def _stress(out: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["stress", str(GOLDEN), "--pipeline", "extractive",
                                    "--judge", "fake", "--levels", "0,1", "--out", str(out),
                                    *extra], catch_exceptions=False)


def test_the_plot_install_line_prints_literally(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import noisegauge.stress.plot as plot

    def missing(*args: Any, **kwargs: Any) -> Path:
        raise MissingDependency("curve.png", "plot", "matplotlib")

    monkeypatch.setattr(plot, "plot_curve", missing)
    res = _stress(tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "pip install '.[plot]'" in res.stdout


def test_ctrl_c_exits_130_saying_what_was_kept(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import noisegauge.stress as stress_pkg

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(stress_pkg, "stress", interrupted)
    res = _stress(tmp_path / "out")
    assert res.exit_code == 130
    assert "interrupted; no answer was cached, so nothing was kept" in res.stderr
    (tmp_path / "out" / "generations.sqlite").write_bytes(b"")
    res = _stress(tmp_path / "out")
    assert res.exit_code == 130
    assert "interrupted; answers generated so far are kept in" in res.stderr
    assert "Traceback" not in res.output
    res = _stress(tmp_path / "out2", "--no-cache")
    assert res.exit_code == 130 and "nothing was kept (--no-cache)" in res.stderr


def test_an_unwritable_out_is_refused_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = _stress(blocker / "out")
    assert res.exit_code == 2 and res.stderr.startswith("error: cannot write to --out")


def test_timeout_and_retries_reach_only_a_remote_judge(tmp_path: Path) -> None:
    base: dict[str, Any] = {
        "headers": (), "base_url": None, "api_key": None, "prompt": None, "temperature": None,
        "request_template": None, "answer_path": None, "timeout": 5.0, "judge_base_url": None,
        "judge_api_key": None, "no_cache": True, "cache_path": None, "levels": [0],
        "strategy": "others", "position": "random", "repeats": 1, "seed": 0, "pool": None,
        "concurrency": 1, "judge_concurrency": 1, "retries": 1}
    remote = _run_kwargs({**base, "judge": "openai:gpt-4o-mini"}, tmp_path)
    assert remote["judge_options"] == {"timeout": 5.0, "max_retries": 1}
    assert remote["pipeline_options"]["timeout"] == 5.0 and remote["retries"] == 1
    local = _run_kwargs({**base, "judge": "lexical"}, tmp_path)
    assert local["judge_options"] == {}
    default = _run_kwargs({**base, "judge": "lexical", "retries": None}, tmp_path)
    assert default["retries"] == 2


def test_piped_compare_table_has_every_number(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["compare", str(GOLDEN), "--pipeline", "extractive",
                                   "--pipeline", "extractive:strict", "--judge", "fake",
                                   "--levels", "0,2", "--out", str(tmp_path / "ab")],
                             catch_exceptions=False)  # CliRunner's stdout is a pipe
    assert res.exit_code == 0, res.output
    line = next(x for x in res.stdout.splitlines() if "noise_sensitivity_irrelevant" in x)
    cells = line.replace("│", " ").split()
    assert len(cells) >= 8, line  # metric, n, mean A, mean B, B-A, CI (2), p, verdict
    assert all(any(ch.isdigit() for ch in c) for c in cells[1:6])
