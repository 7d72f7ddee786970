"""The exception tree, in one place.

    NoiseGaugeError
    ├── InvalidSample (ValueError)      a row that cannot be scored; names the row, field and fix
    ├── InvalidInput (ValueError)       an unreadable file or bad option
    ├── UnwritableOutput                an output file that cannot be written; names it and why
    ├── JudgeError                      a judge could not produce a verdict
    │   ├── JudgeUnavailable            endpoint unreachable, auth failed, retries exhausted
    │   └── JudgeOutputError            output that stays unusable after repair
    ├── MissingDependency (ImportError) an optional extra is not installed; says what to pip install
    └── SyncInAsyncError (RuntimeError) ``score()`` called inside a running event loop
"""

from __future__ import annotations

__all__ = [
    "NoiseGaugeError",
    "InvalidSample",
    "InvalidInput",
    "UnwritableOutput",
    "JudgeError",
    "JudgeUnavailable",
    "JudgeOutputError",
    "MissingDependency",
    "SyncInAsyncError",
]


class NoiseGaugeError(Exception):
    """Base class of every error raised on purpose by noisegauge."""


class InvalidSample(NoiseGaugeError, ValueError):
    """A sample that cannot be scored.

    Attributes say where: ``row`` (0-based input position, or None), ``field`` and ``expected``.
    """

    def __init__(self, message: str, *, row: int | None = None, field: str | None = None,
                 expected: str | None = None) -> None:
        self.row = row
        self.field = field
        self.expected = expected
        where = []
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = (", ".join(where) + ": ") if where else ""
        suffix = f" (expected {expected})" if expected else ""
        super().__init__(f"{prefix}{message}{suffix}")


class InvalidInput(NoiseGaugeError, ValueError):
    """An input file, option or argument that cannot be used at all."""


class UnwritableOutput(NoiseGaugeError):
    """An output file that cannot be written (a read-only place, a file where a folder
    should be, a full disk). ``path`` is the output asked for, ``reason`` the system's."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}; choose another path")


class JudgeError(NoiseGaugeError):
    """A judge failed to produce claims or verdicts."""


class JudgeUnavailable(JudgeError):
    """The judge could not be reached or kept failing after retries."""


class JudgeOutputError(JudgeError):
    """The judge answered, but its output stayed unusable after repair attempts."""


class MissingDependency(NoiseGaugeError, ImportError):
    """An optional extra is needed; the message holds the exact ``pip install`` line."""

    def __init__(self, feature: str, extra: str, packages: str) -> None:
        self.extra = extra
        super().__init__(
            f"{feature} needs {packages}, which is not installed. "
            f"Install it with: pip install '.[{extra}]'"
        )


class SyncInAsyncError(NoiseGaugeError, RuntimeError):
    """A synchronous entry point was called while an event loop is running."""
