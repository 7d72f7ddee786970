"""The test suite never writes into the user's own cache (issue 22, item 7; #30).

Hooks that ``conftest.py`` imports (so that a test can load them into a session of its own):

- ``pytest_configure``: before any fixture of any scope runs, every process of the session
  (each xdist worker too) points ``XDG_CACHE_HOME`` and ``NOISEGAUGE_CACHE`` at a temporary
  folder of its own, so every cache a test opens, and every CLI run it starts (they inherit
  the environment), is that one; and it installs an audit hook that notes each write into
  the user's cache folder (and the file ``$NOISEGAUGE_CACHE`` named before) by this process:
  a file opened for writing, an SQLite connection, a folder made, a file renamed or removed.
- ``pytest_sessionfinish``: each worker hands its notes to the controlling process, which
  fails the run naming the paths and the events.

What is checked is what the session's own processes did, never the folder's contents: the
user's cache is the user's, and another noisegauge run writing it meanwhile (the user's own,
another checkout's suite) is no failure of the tests.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from noisegauge.infra.store import default_cache_path

_STATE: dict[str, Any] = {"touched": []}
#: Audit events that change a path (``open`` only when its flags ask to write).
_EVENTS = frozenset({"open", "sqlite3.connect", "os.mkdir", "os.remove", "os.rename",
                     "os.rmdir", "os.truncate", "shutil.rmtree", "shutil.copyfile"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_KEY = "noisegauge_cache_touched"


def _watched() -> list[str]:
    """The user's cache, as absolute paths: noisegauge's folder in the user cache directory,
    and the file ``$NOISEGAUGE_CACHE`` names (when it names one; its -wal/-shm too)."""
    paths = [default_cache_path().parent]
    named = os.environ.get("NOISEGAUGE_CACHE", "")
    if named and named.lower() not in ("off", "none", "false", "0", "no"):
        paths.append(Path(named).expanduser())
    return [os.path.abspath(p) for p in paths]


def _inside(arg: Any, watched: list[str]) -> str | None:
    if isinstance(arg, int) or arg is None:  # a file descriptor
        return None
    try:
        path = os.path.abspath(os.fsdecode(arg))
    except (TypeError, ValueError):
        return None
    for w in watched:
        if path == w or path.startswith(w + os.sep) or path.startswith(w + "-"):
            return path
    return None


def _install_hook(watched: list[str]) -> None:
    """Note every write into ``watched`` by this process (audit hooks stay for its life)."""
    touched: list[str] = _STATE["touched"]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in _EVENTS or not args:
            return
        if event == "open" and not (len(args) > 2 and isinstance(args[2], int)
                                    and args[2] & _WRITE_FLAGS):
            return
        names = args[:2] if event in ("os.rename", "shutil.copyfile") else args[:1]
        for arg in names:
            path = _inside(arg, watched)
            if path is not None and len(touched) < 100:
                touched.append(f"{path} ({event})")

    sys.addaudithook(hook)


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:  # the controlling (or only) process, before the redirect below
        _STATE["watched"] = _watched()
    if "hooked" not in _STATE:  # once per process (a test may start a session in-process)
        _STATE["hooked"] = True
        # An xdist worker starts with the redirected environment: it is told the user's paths.
        _install_hook(workerinput[_KEY] if workerinput is not None else _STATE["watched"])
    home = Path(tempfile.mkdtemp(prefix="noisegauge-tests-"))
    _STATE["home"] = home
    os.environ["XDG_CACHE_HOME"] = str(home / "xdg")
    os.environ["NOISEGAUGE_CACHE"] = str(home / "judge-cache.sqlite3")


def pytest_unconfigure(config: pytest.Config) -> None:
    home = _STATE.pop("home", None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(xdist, controlling process) Tell a worker where the user's cache is."""
    node.workerinput[_KEY] = _STATE["watched"]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """(xdist, controlling process) A worker's notes, handed over as it finishes."""
    output = getattr(node, "workeroutput", None) or {}
    _STATE["touched"].extend(output.get(_KEY, []))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    touched = sorted(set(_STATE["touched"]))
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controlling process reports
        workeroutput[_KEY] = touched
        return
    if not touched:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["the tests wrote into the user's cache (they must use temporary folders only):",
             *(f"  {p}" for p in touched[:20])]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True, bold=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
