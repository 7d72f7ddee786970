"""Outputs that must not destroy files, and a stdout closed early (issue #30)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "examples" / "calibration_pairs.jsonl"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.mark.parametrize("args", [["calibrate", str(PAIRS)], ["cache", "info"],
                                  ["--help"]])
def test_stdout_closed_early_exits_0_quietly(args: list[str]) -> None:
    """A reader that is gone before the first line (``| head -0``): exit 0, nothing on stderr."""
    r, w = os.pipe()
    os.close(r)  # every write to stdout now fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "noisegauge", *args], stdout=w,
                              stderr=subprocess.PIPE, env=_env(), timeout=120, check=False)
    finally:
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"Broken pipe" not in proc.stderr


def test_stdout_closed_after_first_line_exits_0() -> None:
    """``noisegauge calibrate ... | head -1`` through a real pipe."""
    proc = subprocess.Popen([sys.executable, "-m", "noisegauge", "calibrate", str(PAIRS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith(b"30 labelled pairs")
