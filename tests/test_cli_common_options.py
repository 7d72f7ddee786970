"""The options every command shares are spelt, and behave, the same on each."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.testing import CliRunner

from noisegauge.cli.main import cli

COMMANDS = ("score", "stress", "compare", "report", "calibrate")
GOLDEN = Path(__file__).resolve().parents[1] / "examples" / "golden_support.jsonl"


def _option(command: str, flag: str) -> tuple[set[str], str | None]:
    """The flags and help of the option of ``command`` that ``flag`` names."""
    found = cli.get_command(click.Context(cli), command)  # type: ignore[attr-defined]
    assert found is not None, command
    for p in found.params:
        flags = set(p.opts) | set(p.secondary_opts)
        if flag in flags:
            return flags, getattr(p, "help", None)
    raise AssertionError(f"`noisegauge {command}` has no {flag}")


def test_quiet_is_one_option_on_every_command() -> None:
    spelt = {c: _option(c, "--quiet") for c in COMMANDS}
    assert all(flags == {"-q", "--quiet"} for flags, _ in spelt.values()), spelt
    assert len({text for _, text in spelt.values()}) == 1, spelt


def test_judge_is_taken_by_every_command_that_judges() -> None:
    for command in ("score", "stress", "compare", "calibrate"):
        _option(command, "--judge")


def test_stress_takes_q_and_then_prints_only_its_results(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(line + "\n" for line in GOLDEN.read_text().splitlines()[:3]))
    runs = {}
    for flag in ([], ["-q"]):
        out = tmp_path / f"out{len(flag)}"
        res = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                       "--levels", "0,1", "--out", str(out), *flag])
        assert res.exit_code == 0, res.output
        runs[bool(flag)] = res
        assert json.loads((out / "curve.json").read_text())["levels"] == [0, 1]
    assert runs[True].stderr == ""
    # the results are the same, only the notes go
    assert runs[True].stdout.replace("out1", "out0") == runs[False].stdout


def test_report_q_drops_its_note(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    row = {"index": 0, "id": "a", "status": "ok", "metrics": {}, "response_claims": []}
    results.write_text(json.dumps(row) + "\n")
    loud = CliRunner().invoke(cli, ["report", str(results), "--out", str(tmp_path / "a.html")])
    quiet = CliRunner().invoke(cli, ["report", str(results), "--out", str(tmp_path / "b.html"),
                                     "-q"])
    assert loud.exit_code == quiet.exit_code == 0, (loud.output, quiet.output)
    assert "note:" in loud.stderr and quiet.stderr == ""
