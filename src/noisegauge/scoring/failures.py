"""Which failures cost one row (an ``error`` row with a kind) and which are bugs (raised).

A judge failure (``JudgeError``), a bad row (``InvalidSample``), a timeout or a connection
error costs the row it happened in; a TypeError or AttributeError is a bug, in noisegauge or
in a custom judge, and must stop the run with its traceback instead of hiding in a row.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from ..errors import InvalidSample, JudgeOutputError, JudgeUnavailable, NoiseGaugeError
from ..infra.secrets import redact_message

__all__ = ["ERROR_KINDS", "ErrorKind", "describe_failure", "failure_kind"]

#: Why a row is an error: its input (``input``), the judge's endpoint (``transport``: not
#: reachable, refused, timed out), the judge's answer (``output``), another judge failure
#: (``judge``), a stress pipeline (``pipeline``), or a run stopped mid-row (``interrupted``).
ErrorKind = Literal["input", "transport", "output", "judge", "pipeline", "interrupted"]
ERROR_KINDS: tuple[str, ...] = ("input", "transport", "output", "judge", "pipeline", "interrupted")

# Exceptions of these client libraries are failures to reach an endpoint, whatever their class.
_TRANSPORT_MODULES = ("httpx", "httpcore", "aiohttp", "requests", "urllib3", "openai")


def failure_kind(exc: BaseException) -> ErrorKind | None:
    """The error kind of a failure that costs one row, or None for a bug (to be raised).

    Judge failures (``JudgeError``), bad rows (``InvalidSample``), timeouts and connection
    errors cost the row; a TypeError or AttributeError is a bug and must stop the run.
    """
    if isinstance(exc, InvalidSample):
        return "input"
    if isinstance(exc, JudgeUnavailable):
        return "transport"
    if isinstance(exc, JudgeOutputError):
        return "output"
    if isinstance(exc, NoiseGaugeError):
        return "judge"
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return "transport"
    if type(exc).__module__.split(".")[0] in _TRANSPORT_MODULES:
        return "transport"
    return None


def describe_failure(exc: BaseException) -> str:
    """``Type: message``, never an empty message. Key-shaped text is masked in a judge's or
    library's message; a bad row's message quotes the user's data and is kept as it is."""
    text = str(exc).strip()
    if not text and isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        text = "no answer in time"
    text = f"{type(exc).__name__}: {text or '(no message)'}"
    return text if isinstance(exc, InvalidSample) else redact_message(text)
