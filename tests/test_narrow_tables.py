"""The summary and leaks tables at 80 and 60 columns: nothing dropped, no figure cut.

The CLI runs in a real pseudo-terminal of that width (on a pipe tables get the width they
need, so CliRunner would never see the squeeze); the wide output on a pipe is the reference.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.console import Console

from noisegauge.infra.tables import Col, Fitted

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _env(columns: int | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def _piped(args: list[str], cwd: Path) -> str:
    r = subprocess.run([sys.executable, "-m", "noisegauge", *args], cwd=cwd, env=_env(None),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _in_terminal(args: list[str], cwd: Path, columns: int) -> str:
    """stdout of the CLI in a pseudo-terminal ``columns`` wide, escapes stripped."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "noisegauge", *args], cwd=cwd,
                            env=_env(columns), stdin=slave, stdout=slave,
                            stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        assert proc.wait(timeout=300) == 0
    text = ANSI.sub("", b"".join(chunks).decode("utf-8")).replace("\r", "")
    return text


def _rows(text: str, first: str) -> dict[str, list[str]]:
    """Cells of each table row (split at 2+ spaces), keyed by the row's first cell, over
    every table that shows rows keyed ``first``-style; a split table adds its cells."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and re.fullmatch(first, cells[0]):
            rows.setdefault(cells[0], []).extend(cells[1:])
    return rows


METRIC = r"[a-z][a-z0-9_]*_?[a-z0-9]+"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    cwd = tmp_path_factory.mktemp("narrow")
    wide = _piped(["score", str(EXAMPLE), "--out", "r.jsonl", "--no-cache", "-q"], cwd)
    return cwd, wide


def _summary(text: str) -> dict[str, list[str]]:
    table = text.split("noisegauge summary", 1)[1].split("\nrows ", 1)[0]
    return {k: v for k, v in _rows(table, METRIC).items() if k != "metric"}


@pytest.mark.parametrize("columns", [80, 60])
def test_the_summary_keeps_every_metric_and_figure_at_narrow_widths(
        scored: tuple[Path, str], columns: int) -> None:
    cwd, wide = scored
    reference = _summary(wide)
    assert "noise_sensitivity_irrelevant" in reference and len(reference) >= 10
    assert max(map(len, wide.splitlines())) > columns  # the squeeze is real
    narrow = _in_terminal(["score", str(EXAMPLE), "--out", "n.jsonl", "--no-cache", "-q"],
                          cwd, columns)
    assert max(map(len, narrow.splitlines())) <= columns, narrow
    assert "…" not in narrow.split("\nrows ", 1)[0], narrow
    assert _summary(narrow) == reference, narrow


@pytest.mark.parametrize("columns", [80, 60])
def test_the_leaks_table_keeps_every_source_and_figure_at_narrow_widths(
        scored: tuple[Path, str], columns: int) -> None:
    cwd, _ = scored
    args = ["leaks", "r.jsonl", "--examples", "0", "--topk"]
    wide = _piped(args, cwd)
    narrow = _in_terminal(args, cwd, columns)
    assert max(map(len, narrow.splitlines())) <= columns, narrow
    # rich marks a cut cell with "…"; the source labels bring their own, no more may appear
    assert narrow.count("…") == wide.count("…"), narrow
    ranks_wide, ranks_narrow = _rows(wide, r"\d+"), _rows(narrow, r"\d+")
    assert set(ranks_narrow) == set(ranks_wide) and len(ranks_wide) >= 10
    words = set(narrow.split())
    for rank, cells in ranks_wide.items():
        figures = [c for c in cells if re.fullmatch(r"[\d.,]+%?|-|text:[0-9a-f]{16}", c)]
        label = next(c for c in cells if c.startswith("text:") and " " in c)
        assert all(w in words for w in label.split()), (rank, label, narrow)
        got = [c for c in ranks_narrow[rank]
               if re.fullmatch(r"[\d.,]+%?|-|text:[0-9a-f]{16}", c)]
        assert sorted(got) == sorted(figures), (rank, narrow)


@pytest.mark.parametrize("width", [120, 80, 60, 40, 24])
def test_a_fitted_table_never_cuts_a_figure(width: int) -> None:
    cols = [Col("metric", "key"), Col("mean"), Col("95% CI"), Col("n"),
            Col("undefined", short="undef."), Col("note", "text")]
    rows = [[f"metric_with_a_long_name_{i}", f"0.{i}23", f"[0.0{i}4, 0.{i}96]", f"{i * 1000:,}",
             str(i), "a note of several words " * 3] for i in range(1, 6)]
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(Fitted(cols, rows, title="t"))
    out = console.export_text()
    assert max(map(len, out.splitlines())) <= width
    words = out.split()
    for r in rows:
        for figure in r[1:5]:
            assert all(w in words for w in figure.split()), (figure, out)
        if width >= 40:  # below that, even a key folds rather than cut a figure
            assert r[0] in words
    assert "…" not in out


def test_the_people_estimate_keeps_every_figure_at_80_columns(scored: tuple[Path, str]) -> None:
    cwd, _ = scored
    labels = subprocess.run([sys.executable, str(ROOT / "docs" / "scripts" / "example_labels.py"),
                             "r.jsonl", "--out", "labels.jsonl", "--n", "20", "--seed", "3"],
                            cwd=cwd, env=_env(None), capture_output=True, text=True, timeout=300)
    assert labels.returncode == 0, labels.stderr
    args = ["estimate", "r.jsonl", "--labels", "labels.jsonl", "--confidence", "0.9"]
    wide = _piped(args, cwd)
    reference = {k: v for k, v in _rows(wide, METRIC).items() if k != "metric"}
    assert "noise_sensitivity_relevant" in reference
    assert max(map(len, wide.splitlines())) > 80
    narrow = _in_terminal(args, cwd, 80)
    table = narrow.split("judge vs people", 1)[0]
    assert max(map(len, table.splitlines())) <= 80, narrow
    assert "…" not in table, narrow
    got = {k: v for k, v in _rows(table, METRIC).items() if k in reference}
    assert got == reference, narrow
