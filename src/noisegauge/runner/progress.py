"""Live progress on stderr (rich): rows, rate, ETA, judge calls, tokens, cost, errors."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from .stats import RunStats

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
    """A context manager; ``update(stats)`` after each row (rich redraws ~10 times a second)."""

    def __init__(self, total: int | None, console: Console | None = None) -> None:
        self._progress = Progress(
            BarColumn(bar_width=20), MofNCompleteColumn(), _RateColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), TextColumn("{task.fields[usage]}"),
            console=console or Console(stderr=True), transient=False,
        )
        self._task = self._progress.add_task("scoring", total=total, usage="")

    def __enter__(self) -> None:
        self._progress.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._progress.stop()

    def update(self, stats: RunStats) -> None:
        self._progress.update(self._task, completed=stats.rows, usage=usage_line(stats))
