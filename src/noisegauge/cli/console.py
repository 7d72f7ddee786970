"""What the commands print, and how: literally, redacted, whole when piped.

- No rich markup is ever read from text: a file name or a reason with ``[brackets]`` prints
  as it is (styles are applied with ``Text`` objects only).
- Every message on stderr passes through ``redact`` (so does the log, by its filter).
- On a pipe, tables get the width they need instead of rich's default 80 columns, so no
  column is squeezed empty; a closed pipe (``| head``) silences stdout instead of raising.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

import click
from rich.console import Console
from rich.logging import RichHandler
from rich.text import Text

from ..infra.secrets import redact

__all__ = ["cli_logging", "error", "note", "quiet_option", "stderr", "stdout"]


class _PipeSafe:
    """stdout that stops writing (and stops Python's exit-time flush error) once the
    reading end of a pipe is gone."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def _silence(self) -> None:
        self.broken = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stdout() -> Console:
    """The console for results (tables, summaries); on a pipe, lines are never cut or
    wrapped, so a table keeps every column at its natural width."""
    stream = sys.stdout
    tty = stream.isatty()
    return Console(file=_PipeSafe(stream), markup=False, highlight=False,  # type: ignore[arg-type]
                   width=None if tty else 10_000, soft_wrap=not tty)


def stderr() -> Console:
    """The console for progress, notes and errors."""
    return Console(stderr=True, markup=False, highlight=False)


def error(message: str, console: Console | None = None, label: str = "error") -> None:
    """``error: MESSAGE`` on stderr, the label in red, the message literal and redacted."""
    (console or stderr()).print(Text(f"{label}: ", style="bold red") + Text(redact(message)),
                                soft_wrap=True)


def note(message: str, console: Console | None = None, style: str = "") -> None:
    """A line on stderr, literal and redacted."""
    (console or stderr()).print(Text(redact(message), style=style), soft_wrap=True)


@contextlib.contextmanager
def cli_logging(quiet: bool) -> Iterator[None]:
    """noisegauge's log messages on stderr (literal, redacted) for the length of a command."""
    logger = logging.getLogger("noisegauge")
    handler = RichHandler(console=stderr(), show_time=False, show_path=False, markup=False)
    handler.setLevel(logging.ERROR if quiet else logging.INFO)
    logger.addHandler(handler)
    old_level = logger.level
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    old, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = old
        logger.setLevel(old_level)


_F = TypeVar("_F", bound=Callable[..., Any])


def quiet_option(f: _F) -> _F:
    """``-q/--quiet``, one definition for every command: stderr keeps only errors."""
    return click.option("--quiet", "-q", is_flag=True,
                        help="No progress bar or notes on stderr (errors still print).")(f)
