"""``score phoenix:PROJECT`` without a server: its options are refused with other inputs,
and without the phoenix extra the exact install line is printed (the round trip against a
real server is tests/test_phoenix.py)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from batch_helpers import installed, row
from noisegauge.cli.main import cli


def test_phoenix_options_need_a_phoenix_input(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(__import__("json").dumps(row(1)) + "\n")
    for flags in (["--annotate"], ["--since", "1h"], ["--phoenix-url", "http://127.0.0.1:9"]):
        done = CliRunner().invoke(cli, ["score", str(data), *flags])
        assert done.exit_code == 2 and "go with INPUT phoenix:PROJECT" in done.output
    done = CliRunner().invoke(cli, ["score", "phoenix:bot", "--format", "jsonl"])
    assert done.exit_code == 2 and "leave out --format" in done.output


def test_missing_phoenix_extra_names_the_install_line() -> None:
    if installed("phoenix.client"):
        import pytest

        pytest.skip("arize-phoenix-client is installed here: nothing missing to name")
    done = CliRunner().invoke(cli, ["score", "phoenix:bot", "--phoenix-url",
                                    "http://127.0.0.1:9"])
    assert done.exit_code == 2
    assert "pip install '.[phoenix]'" in done.output
