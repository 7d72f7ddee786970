"""The test suite never writes into the user's own cache (issue 22, item 7).

Hooks that ``conftest.py`` imports (so that a test can load them into a session of its own):

- ``pytest_configure``: before any fixture of any scope runs, every process of the session
  (each xdist worker too) points ``XDG_CACHE_HOME`` and ``NOISEGAUGE_CACHE`` at a temporary
  folder of its own; module-scoped fixtures included, nothing reaches the user's cache.
- ``pytest_sessionfinish``: the controlling process compares the user's noisegauge cache
  folder (and ``$NOISEGAUGE_CACHE`` if the user set one) with what it held at the start, and
  fails the run, naming the files, when a test touched it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from noisegauge.infra.store import default_cache_path

_STATE: dict[str, Any] = {}


def _watched() -> list[Path]:
    """The user's cache: noisegauge's folder in the user cache directory, and the file
    ``$NOISEGAUGE_CACHE`` names (when it names one)."""
    paths = [default_cache_path().parent]
    named = os.environ.get("NOISEGAUGE_CACHE", "")
    if named and named.lower() not in ("off", "none", "false", "0"):
        paths.append(Path(named))
    return paths


def _snapshot(paths: list[Path]) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.name.endswith(("-shm", "-wal")):  # SQLite's while a connection is open:
                continue  # a reader elsewhere makes them too; a write lands in the file itself
            try:
                st = f.stat()
            except OSError:  # removed while we looked
                continue
            found[str(f)] = (st.st_size, st.st_mtime_ns)
    return found


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controlling (or only) process watches
        _STATE["watched"] = _watched()
        _STATE["before"] = _snapshot(_STATE["watched"])
    home = Path(tempfile.mkdtemp(prefix="noisegauge-tests-"))
    _STATE["home"] = home
    os.environ["XDG_CACHE_HOME"] = str(home / "xdg")
    os.environ["NOISEGAUGE_CACHE"] = str(home / "judge-cache.sqlite3")


def pytest_unconfigure(config: pytest.Config) -> None:
    home = _STATE.pop("home", None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if "watched" not in _STATE:
        return
    before, after = _STATE["before"], _snapshot(_STATE["watched"])
    touched = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if not touched:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["the tests wrote into the user's cache (they must use temporary folders only):",
             *(f"  {p}" for p in touched[:20]),
             "(another process using the same cache meanwhile shows here too: run again to "
             "confirm)"]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True, bold=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
