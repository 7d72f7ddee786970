"""Children started through ``noisegauge.testing.children`` die with the process that started
them, grandchildren included, even when that process is killed with SIGKILL (#30: a test killed
mid-run left a ``slow_cli.py`` process and an MLflow server with its workers running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from noisegauge.testing.children import spawned

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process groups and /proc as on Linux")

SRC = Path(__file__).resolve().parents[1] / "src"

#: The stand-in for a test process: starts a child that starts a grandchild (a server and its
#: worker), prints both ids, then waits to be killed.
LAUNCHER = """
import subprocess, sys, time
from noisegauge.testing.children import spawn
child = spawn([sys.executable, "-c",
               "import subprocess, sys, time; "
               "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
               "print(w.pid, flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
worker = child.stdout.readline().strip()
print(child.pid, worker, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _gone(pids: list[int], seconds: float) -> list[int]:
    """The pids still running after polling up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_sigkilled_parent_takes_its_child_and_grandchild_along() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE,
                                text=True, env=env)
    try:
        assert launcher.stdout is not None
        line = launcher.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids), line
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(30)
        left = _gone(pids, 30)
        assert left == [], f"still running after the parent was killed: {left}"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait(30)


def test_stop_kills_the_group_and_the_exit_status_is_the_childs() -> None:
    script = ("import subprocess, sys, time; "
              "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
              "print(w.pid, flush=True); time.sleep(600)")
    with spawned([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        worker = int(proc.stdout.readline())
        assert _alive(worker)
    assert proc.returncode == -signal.SIGKILL
    assert _gone([worker], 30) == []
