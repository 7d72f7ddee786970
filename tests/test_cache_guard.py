"""The session-level check of ``cache_guard`` (issue 22, item 7): a run whose tests write into
the user's cache fails, naming the file; module-scoped fixtures are isolated too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from cache_guard import pytest_configure, pytest_sessionfinish, pytest_unconfigure
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


@pytest.mark.parametrize("write", [False, True], ids=["clean", "writes"])
def test_the_run_fails_when_a_test_writes_into_the_user_cache(tmp_path: Path,
                                                              write: bool) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "suite" / "test_inner.py").write_text(TESTS_FILE)
    user = tmp_path / "user-xdg"
    env = {k: v for k, v in os.environ.items() if k != "NOISEGAUGE_CACHE"}
    env.update(XDG_CACHE_HOME=str(user), USER_XDG=str(user))
    if write:
        env["WRITE_INTO_USER_CACHE"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path / "suite")], cwd=tmp_path / "suite", env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    if write:
        assert proc.returncode == 1, out
        assert "wrote into the user's cache" in out and "judge-cache.sqlite3" in out
    else:
        assert proc.returncode == 0, out
        assert not (user / "noisegauge").exists()  # the module-scoped run went elsewhere
