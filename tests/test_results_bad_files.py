"""Bad RESULTS files end in one error line and exit 2, never a traceback (issue #30)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BAD = {
    "random.jsonl": b"\x00\xa5\xff\xfe garbage \x9c\x80\n",
    "int.jsonl": b"7\n",
    "truncated.jsonl": b'{"status": "ok", "metr',
}
COMMANDS = [["leaks"], ["calibrate"], ["report", "--out", "x.html"],
            ["sample", "--n", "2", "--out", "plan.jsonl"]]


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c[0])
def test_bad_results_file_is_one_line_exit_2(tmp_path: Path, name: str, cmd: list[str]) -> None:
    """Each command names the file and line and exits 2 on unreadable results."""
    path = tmp_path / name
    path.write_bytes(BAD[name])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.run([sys.executable, "-m", "noisegauge", cmd[0], str(path), *cmd[1:]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert name in proc.stderr and "1" in proc.stderr
