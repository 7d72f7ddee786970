"""The same output on every Python the package supports (issue 22, item 2).

The Quickstart (``noisegauge score examples/support_bot.jsonl --out results.jsonl``, canaries
on as by default) runs under this interpreter and under each other supported version, each
from this checkout's sources and with a fresh cache; the files must be identical byte for
byte. The other interpreters come from ``NOISEGAUGE_TEST_PYTHONS`` (paths separated by
``os.pathsep``, each with noisegauge's dependencies installed; ``.ci/run`` sets it). A version
with no interpreter given is a skip that names it and says how to add it, never silent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from noisegauge import FakeJudge, Verdict

ROOT = Path(__file__).resolve().parents[1]
#: The versions pyproject's classifiers promise (requires-python >= 3.10).
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"
QUICKSTART = ["-m", "noisegauge", "score", "examples/support_bot.jsonl", "--out", "results.jsonl"]


def _version(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def _given() -> dict[str, str]:
    """Interpreters named in NOISEGAUGE_TEST_PYTHONS, by version."""
    found: dict[str, str] = {}
    for python in filter(None, os.environ.get("NOISEGAUGE_TEST_PYTHONS", "").split(os.pathsep)):
        if not Path(python).exists():
            pytest.fail(f"NOISEGAUGE_TEST_PYTHONS names {python}, which does not exist")
        found[_version(python)] = python
    return found


def _quickstart(python: str, where: Path) -> bytes:
    """The Quickstart run by ``python`` in a fresh folder holding a copy of the example."""
    (where / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "support_bot.jsonl", where / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"),
           "NOISEGAUGE_CACHE": str(where / "cache.sqlite3")}  # fresh, and not the user's
    proc = subprocess.run([python, *QUICKSTART], cwd=where, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"{python}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return (where / "results.jsonl").read_bytes()


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """This interpreter's results (once for every comparison)."""
    return _quickstart(sys.executable, tmp_path_factory.mktemp("quickstart") / CURRENT)


@pytest.mark.parametrize("version", [v for v in SUPPORTED if v != CURRENT])
def test_quickstart_is_byte_identical_on_every_python(version: str, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    python = _given().get(version)
    if python is None:
        pytest.skip(f"no Python {version} to compare with: add one with noisegauge's "
                    f"dependencies to NOISEGAUGE_TEST_PYTHONS (.ci/run does: a venv per version "
                    f"from pyenv)")
    probe = subprocess.run([python, "-c", "import click, rich, snowballstemmer"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, f"{python} lacks noisegauge's dependencies: {probe.stderr}"
    here: bytes = request.getfixturevalue("here")  # only once a comparison will be made
    there = _quickstart(python, tmp_path / version)
    if here != there:
        lines = zip(here.splitlines(), there.splitlines(), strict=False)
        first = next((i for i, (a, b) in enumerate(lines) if a != b), None)
        pytest.fail(f"results.jsonl differs between Python {CURRENT} and {version} "
                    f"(first at line {first}; {len(here)} vs {len(there)} bytes)")
    # The features that 3.12+ lost through the judge wrappers are really in both.
    assert b'"reference_score": null' not in here and b'"uncertain": null' not in here


class BatchFake(FakeJudge):
    """A judge with ``check_many`` that pickles (module level)."""

    async def check_many(self, premises: Sequence[str],
                         claims: Sequence[str]) -> list[list[Verdict]]:
        return [await self.check(p, claims) for p in premises]


def test_wrappers_declare_what_they_forward(tmp_path: Path) -> None:
    """On every Python (3.12+ ``isinstance`` looks attributes up statically): a wrapper shows
    the capabilities of the judge it wraps, and nothing is reached through ``__getattr__``."""
    import pickle

    from noisegauge import get_judge
    from noisegauge.infra.store import JudgeCache
    from noisegauge.judges.base import BatchChecker, JudgeWrapper, ScoredChecker
    from noisegauge.judges.cached import ScoredCachedJudge, with_cache
    from noisegauge.judges.canaries import CanaryReport, watch
    from noisegauge.testing.faults import FaultyJudge

    assert "__getattr__" not in vars(JudgeWrapper)
    lexical = get_judge("lexical")
    assert isinstance(lexical, ScoredChecker)
    watched = watch(lexical, CanaryReport())
    assert isinstance(watched, ScoredChecker) and isinstance(watched, BatchChecker)
    assert watched.uncertain_band == lexical.uncertain_band  # type: ignore[attr-defined]
    store = JudgeCache(tmp_path / "cache.sqlite3")
    try:
        assert isinstance(with_cache(watched, store), ScoredCachedJudge)
    finally:
        store.close()
    assert isinstance(FaultyJudge(lexical, "never", mode="fail"), ScoredChecker)
    # Only what the wrapped judge has: a judge with no scores gives a wrapper with none.
    fake = get_judge("fake")
    assert not isinstance(watch(fake, CanaryReport()), ScoredChecker)
    # Forwarded methods are not pickled but set again (a FaultyJudge goes to Ray workers).
    faulty = pickle.loads(pickle.dumps(FaultyJudge(BatchFake(), "never", mode="fail")))
    assert isinstance(faulty, BatchChecker) and "check_many" in vars(faulty)
    assert faulty.identity() == BatchFake().identity()
