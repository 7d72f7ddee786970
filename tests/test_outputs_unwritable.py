"""An output path that cannot be written is one line naming it and the system's reason, and
exit 2, in every command: never a traceback and exit 4 (issue #30).

The suite runs as root, whom permission bits do not stop, so the unwritable places are ones
that stop root too: a path under a regular file (``file/sub/x``) and a path in ``/proc``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from batch_helpers import ROOT, require_extra
from noisegauge.cli.main import main
from noisegauge.report import read_results
from people_helpers import example_rows, label_like_judge

EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
PAIRS = ROOT / "examples" / "calibration_pairs.jsonl"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    code = stop.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("results") / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in example_rows()), encoding="utf-8")
    return path


def _places(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (an unwritable output path, the reason the message must give)."""
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder\n")
    places = {"under-a-file": (blocker / "sub" / "out.x", f"{blocker} is a file, not a folder"),
              "beside-a-file": (blocker / "out.x", f"{blocker} is a file, not a folder")}
    if sys.platform == "linux":
        places["proc"] = (Path("/proc/noisegauge-test-out.x"), "No such file or directory")
    return places


#: command -> argv with OUT where the output goes
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "report --out": lambda r, out: ["report", str(r), "--out", str(out)],
    "leaks --json": lambda r, out: ["leaks", str(r), "--json", str(out)],
    "estimate --json": lambda r, out: ["estimate", str(r), "--labels",
                                       str(r.with_name("labels.jsonl")), "--json", str(out)],
    "review --labels": lambda r, out: ["review", str(r), "--labels", str(out), "--no-browser"],
    "calibrate --save": lambda r, out: ["calibrate", str(PAIRS), "--save", str(out)],
    "score --out": lambda r, out: ["score", str(EXAMPLE), "--no-cache", "-q", "--out", str(out)],
    "score --report": lambda r, out: ["score", str(EXAMPLE), "--no-cache", "-q", "--report",
                                      str(out)],
    "score --junit": lambda r, out: ["score", str(EXAMPLE), "--no-cache", "-q", "--junit",
                                     str(out)],
    "score --markdown": lambda r, out: ["score", str(EXAMPLE), "--no-cache", "-q",
                                        "--markdown", str(out)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unwritable_output_is_one_line_and_exit_2(tmp_path: Path, results: Path, command: str,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if command.startswith("review"):
        require_extra("review")

    def served(*_: object) -> None:
        raise AssertionError("review served a page with LABELS unwritable")

    monkeypatch.setattr("noisegauge.cli.review.serve", served)  # never a server to hang on
    label_like_judge(results.with_name("labels.jsonl"), read_results(results), 3)
    for name, (out, reason) in _places(tmp_path).items():
        code, err = _run(COMMANDS[command](results, out), capsys)
        assert code == 2, (name, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, (name, err)
        assert f"cannot write {out}: {reason}" in err, (name, err)
        assert ".tmp" not in err, err  # the path asked for, not the temp file's
    assert (tmp_path / "file").read_text() == "a file, not a folder\n"


def test_missing_folders_are_made(tmp_path: Path, results: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "deeper" / "leaks.json"
    code, err = _run(COMMANDS["leaks --json"](results, out), capsys)
    assert code == 0, err
    assert "sources" in json.loads(out.read_text(encoding="utf-8"))


def test_unwritable_step_summary_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(blocker / "summary.md"))
    code, err = _run(["score", str(EXAMPLE), "--no-cache", "-q", "--markdown",
                      str(tmp_path / "m.md")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"cannot write {blocker / 'summary.md'} ($GITHUB_STEP_SUMMARY): {blocker} is a file" in err


def test_unwritable_output_spends_no_judge_call(tmp_path: Path, fake_openai_server: object,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Checked before the probe and canaries: a typo in --report costs nothing."""
    from noisegauge.testing.fake_openai import FakeOpenAIServer

    assert isinstance(fake_openai_server, FakeOpenAIServer)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    blocker = tmp_path / "file"
    blocker.write_text("")
    for option in ("--report", "--junit", "--markdown", "--out"):
        code, err = _run(["score", str(EXAMPLE), "--judge", "openai:fake", "--base-url",
                          fake_openai_server.url, "--no-cache", "-q", option,
                          str(blocker / "x")], capsys)
        assert code == 2 and "is a file, not a folder" in err, err
    assert fake_openai_server.requests == []
