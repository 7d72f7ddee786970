"""The one live progress display (rich, on stderr): rows, rate, ETA, judge usage, errors.

``RichProgress(total)`` follows a scoring run (``update(stats)`` after each row); the stress
commands use the same display with one line per phase (``phase(name, done, total)``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ..report.totals import RunStats

__all__ = ["RichProgress", "usage_line"]


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("--/s" if speed is None else f"{speed:,.1f}/s", style="cyan")


def usage_line(stats: RunStats) -> str:
    """``calls 1,204 (cached 80) · tokens 51,200 · $0.0123 · errors 2``."""
    u = stats.run_usage
    cost = "cost n/a" if u.cost_usd is None else f"${u.cost_usd:,.4f}"
    parts = [f"calls {u.calls:,}" + (f" (cached {u.cached_calls:,})" if u.cached_calls else ""),
             f"tokens {u.prompt_tokens + u.completion_tokens:,}", cost]
    if stats.status.get("error"):
        parts.append(f"errors {stats.status['error']:,}")
    if stats.resumed:
        parts.append(f"resumed {stats.resumed:,}")
    return " · ".join(parts)


class RichProgress:
    """A context manager drawing one bar per task; rich redraws ~10 times a second.

    ``transient``: the bars disappear when done (the stress commands print a table after).
    """

    def __init__(self, total: int | None = None, console: Console | None = None, *,
                 transient: bool = False, description: str | None = None) -> None:
        columns: list[Any] = [BarColumn(bar_width=20), MofNCompleteColumn(), _RateColumn(),
                              TimeElapsedColumn(), TimeRemainingColumn(),
                              TextColumn("{task.fields[note]}", markup=False)]
        if description is not None:
            columns.insert(0, TextColumn("{task.description}", markup=False))
        self._progress = Progress(*columns, console=console or Console(stderr=True),
                                  transient=transient)
        self._tasks: dict[str, TaskID] = {}
        self._total = total
        if description is None:  # a scoring run: its bar shows from the start
            self.phase("scoring", 0, total)

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._progress.stop()

    def phase(self, name: str, done: int, total: int | None, note: str = "") -> None:
        """Show ``done`` of ``total`` for the task ``name`` (created on first use)."""
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(name, total=total, note=note)
        self._progress.update(self._tasks[name], completed=done, total=total, note=note)

    def update(self, stats: RunStats) -> None:
        """After each row of a scoring run."""
        self.phase("scoring", stats.rows, self._total, usage_line(stats))
