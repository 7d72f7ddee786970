"""The pytest plugin (entry point ``pytest11: noisegauge``).

- ``pytest --noisegauge-report=report.html`` writes one self-contained HTML report of every
  evaluation made in the session (``evaluate``/``aevaluate``/``assert_scores``); each sample
  is named after the test that scored it.
- ``assert_scores`` reads ``[tool.noisegauge]`` from the pyproject.toml at pytest's rootdir.

The plugin loads in every pytest run where noisegauge is installed, so it imports nothing
heavy and does nothing unless asked (it lives outside ``noisegauge.pytest``, whose imports
are the evaluation machinery).
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["SessionReports"]

_KEY = pytest.StashKey["SessionReports"]()


class SessionReports:
    """The reports made while tests ran, with the test that made each."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.current: str | None = None
        self.reports: list[tuple[str, Any]] = []

    def add(self, report: Any) -> None:
        if not any(r is report for _, r in self.reports):
            self.reports.append((self.current or "session", report))

    def rows(self) -> list[dict[str, Any]]:
        """Every sample of every report, renumbered, each id prefixed by its test."""
        out: list[dict[str, Any]] = []
        for test, report in self.reports:
            for row in report.rows():
                own = row.get("id") if row.get("id") is not None else f"#{row['index']}"
                out.append({**row, "index": len(out), "id": f"{test} · {own}"})
        return out

    def write(self) -> Path | None:
        if self.path is None or not self.reports:
            return None
        from .report import RunInfo, now_text, write_report

        judges: list[Any] = []
        for _, report in self.reports:
            judges += [j for j in report.judges if j not in judges]
        stamp = now_text()
        title = f"pytest session: {len(self.reports)} evaluation(s)"
        return write_report(self.path, self.rows(),
                            info=RunInfo(title=title, judges=tuple(judges), scored_at=stamp,
                                         generated_at=stamp))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("noisegauge")
    group.addoption("--noisegauge-report", metavar="PATH", default=None,
                    help="Write an HTML report of every noisegauge evaluation in the session.")


def pytest_configure(config: pytest.Config) -> None:
    from . import config as settings
    from .runner.observe import add_observer

    raw = config.getoption("noisegauge_report", None)
    path = Path(os.path.expanduser(raw)) if raw else None
    if path is not None and not path.is_absolute():
        path = Path(config.invocation_params.dir) / path
    reports = SessionReports(path)
    config.stash[_KEY] = reports
    settings.SEARCH_ROOT = config.rootpath
    add_observer(reports.add)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    reports = item.config.stash.get(_KEY, None)
    if reports is not None:
        reports.current = item.nodeid
    try:
        return (yield)
    finally:
        if reports is not None:
            reports.current = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    reports = session.config.stash.get(_KEY, None)
    if reports is not None:
        written = reports.write()
        if written is not None:
            reports.path = written


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    reports = config.stash.get(_KEY, None)
    if reports is None or reports.path is None:
        return
    if reports.reports:
        n = sum(len(r) for _, r in reports.reports)
        terminalreporter.write_line(f"noisegauge: report of {len(reports.reports)} evaluation(s), "
                                    f"{n} samples: {reports.path}")
    else:
        terminalreporter.write_line("noisegauge: no evaluation ran in this session; "
                                    f"no report written to {reports.path}")


def pytest_unconfigure(config: pytest.Config) -> None:
    from . import config as settings
    from .runner.observe import remove_observer

    reports = config.stash.get(_KEY, None)
    if reports is not None:
        remove_observer(reports.add)
        settings.SEARCH_ROOT = None
