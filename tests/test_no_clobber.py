"""No output option may name one of the command's inputs or LABELS (#30): exit 2, one line,
and the file is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("clobber")
    src = d / "in.jsonl"
    src.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(True)[:3]),
                   encoding="utf-8")
    results = d / "r.jsonl"
    res = CliRunner().invoke(cli, ["score", str(src), "--out", str(results), "--no-cache", "-q"])
    assert res.exit_code == 0, res.output
    first = json.loads(results.read_text(encoding="utf-8").splitlines()[0])
    labels = d / "labels.jsonl"
    labels.write_text(json.dumps({"id": first["id"], "noise_sensitivity_relevant": 0.0}) + "\n",
                      encoding="utf-8")
    return {"in": src, "results": results, "labels": labels, "dir": d}


def _cases(f: dict[str, Path]) -> list[tuple[list[str], Path]]:
    r, lab, src = str(f["results"]), str(f["labels"]), str(f["in"])
    link = f["dir"] / "labels-link.jsonl"
    if not link.exists():
        link.symlink_to(f["labels"])
    return [
        (["score", src, "--report", src, "--no-cache"], f["in"]),
        (["score", src, "--out", str(f["dir"] / "o.jsonl"), "--junit", src, "--no-cache"], f["in"]),
        (["score", src, "--out", str(f["dir"] / "o.jsonl"), "--markdown", lab, "--labels", lab,
          "--no-cache"], f["labels"]),
        (["report", r, "--out", r], f["results"]),
        (["estimate", r, "--labels", lab, "--json", lab], f["labels"]),
        (["estimate", r, "--labels", lab, "--json", str(link)], f["labels"]),
        (["estimate", r, "--labels", lab, "--json", r], f["results"]),
        (["leaks", r, "--json", r], f["results"]),
        (["sample", r, "--n", "2", "--out", r], f["results"]),
        (["estimate", r, "--labels", lab, "--plan", lab, "--json", lab], f["labels"]),
    ]


def test_an_output_naming_an_input_is_refused_and_the_file_kept(files: dict[str, Path]) -> None:
    for args, kept in _cases(files):
        before = kept.read_bytes()
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2, (args, res.output)
        assert "would overwrite" in res.output, (args, res.output)
        assert kept.read_bytes() == before, args


def test_a_different_output_file_is_still_written(files: dict[str, Path]) -> None:
    out = files["dir"] / "est.json"
    res = CliRunner().invoke(cli, ["estimate", str(files["results"]), "--labels",
                                   str(files["labels"]), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "metrics" in json.loads(out.read_text(encoding="utf-8"))
