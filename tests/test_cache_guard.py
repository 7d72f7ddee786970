"""The session-level check of ``cache_guard`` (issue 22, item 7): a run whose tests write into
the user's cache fails, naming the file; module-scoped fixtures are isolated too; another
process writing the user's cache meanwhile fails nothing (#30)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from noisegauge.testing.children import spawned

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from cache_guard import (pytest_configure, pytest_configure_node, pytest_sessionfinish,
                         pytest_testnodedown, pytest_unconfigure)
"""

TESTS_FILE = """
import os
from pathlib import Path

import pytest

from noisegauge import evaluate

ROWS = [{"user_input": "q?", "response": "A is one. B is two.", "reference": "A is one.",
         "retrieved_contexts": ["A is one.", "B is two."]}]


@pytest.fixture(scope="module")
def early():  # a module-scoped fixture scoring with the default cache, as the stress tests do
    return evaluate(ROWS, metrics=["noise_sensitivity"], judge="fake", progress=False)


def test_isolated(early):
    assert early.results[0].status == "ok"
    assert not os.environ["XDG_CACHE_HOME"].startswith(os.environ["USER_XDG"])


def test_may_write():
    if os.environ.get("WRITE_INTO_USER_CACHE"):
        target = Path(os.environ["USER_XDG"]) / "noisegauge" / "judge-cache.sqlite3"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"written by a test")
"""


#: The user's own noisegauge runs, one after another, writing the user's cache all along
#: (each one's close moves its answers into the database file itself).
WRITER = """
import sys, time
from noisegauge.infra.store import JudgeCache
n = 0
while True:
    cache = JudgeCache(sys.argv[1])
    cache.put(JudgeCache.key("user", "run", n), {"n": n})
    cache.close()
    if n == 0:
        print("writing", flush=True)
    n += 1
    time.sleep(0.05)
"""


def _inner(tmp_path: Path, env: dict[str, str],
           options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "suite" / "test_inner.py").write_text(TESTS_FILE)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *options, str(tmp_path / "suite")], cwd=tmp_path / "suite", env=env,
                          capture_output=True, text=True, timeout=300)


def _env(user: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NOISEGAUGE_CACHE"}
    env.update(XDG_CACHE_HOME=str(user), USER_XDG=str(user))
    return env


@pytest.mark.parametrize(("write", "options"), [(False, ()), (True, ()), (True, ("-n", "1"))],
                         ids=["clean", "writes", "writes-in-an-xdist-worker"])
def test_the_run_fails_when_a_test_writes_into_the_user_cache(
        tmp_path: Path, write: bool, options: tuple[str, ...]) -> None:
    if options:
        pytest.importorskip("xdist", reason="the worker case needs pytest-xdist")
    user = tmp_path / "user-xdg"
    env = _env(user)
    if write:
        env["WRITE_INTO_USER_CACHE"] = "1"
    proc = _inner(tmp_path, env, options)
    out = proc.stdout + proc.stderr
    if write:
        assert proc.returncode == 1, out
        assert "wrote into the user's cache" in out and "judge-cache.sqlite3" in out
    else:
        assert proc.returncode == 0, out
        assert not (user / "noisegauge").exists()  # the module-scoped run went elsewhere


def test_another_process_writing_the_user_cache_fails_nothing(tmp_path: Path) -> None:
    """#30: the guard compared the user's cache before and after the session, so the user's
    own noisegauge run (or another checkout's suite) writing it meanwhile failed the suite."""
    user = tmp_path / "user-xdg"
    cache = user / "noisegauge" / "judge-cache.sqlite3"
    with spawned([sys.executable, "-c", WRITER, str(cache)], stdout=subprocess.PIPE,
                 text=True) as writer:
        assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
        before = cache.stat().st_mtime_ns
        proc = _inner(tmp_path, _env(user))
        assert writer.poll() is None and cache.stat().st_mtime_ns != before  # it wrote
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "wrote into the user's cache" not in proc.stdout
