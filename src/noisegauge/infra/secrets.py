"""Secrets never leave the process: one registry of secret values, ``redact(text)`` and
``redact_message(text)``.

Judges and pipelines register the keys they are given (``register_secret(key)``); keys in
the usual environment variables (``OPENAI_API_KEY``...) count without registering. Every
place where text leaves the process applies ``redact`` once, on the final text: the log
filter and the CLI's stderr messages, the journal and the result writers, the cache's
values and the stress report files. An endpoint that echoes a key back in an answer, an
error or a claim therefore never gets it into a byte noisegauge writes.

``redact`` masks only the values the process knows, so the user's own text is never
altered: an id ``sb25-sk-prorated`` or a SKU ``sk-2041-blue`` is written as it was read.
Text that did not come from the user's data (exception messages and tracebacks of
providers and client libraries) goes through ``redact_message``, which also masks bearer
tokens and ``sk-...``-shaped keys that reached a message without being registered.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Any

__all__ = ["MASK", "RedactingFilter", "redact", "redact_message", "redact_value",
           "register_secret", "register_secret_header", "secret_values"]

MASK = "***"
#: Shorter values are not masked: they would match ordinary words ("test", "none").
MIN_LENGTH = 6
#: Environment variables whose values are secrets wherever they appear.
ENV_SECRETS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN",
               "HUGGING_FACE_HUB_TOKEN", "NOISEGAUGE_API_KEY")
_PLACEHOLDERS = {"no-key", "not-needed", "none", "null", "sk-test"}

_BEARER = re.compile(r"(Bearer\s+)[^\s\"',;]+", re.IGNORECASE)
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")

_lock = threading.Lock()
_registered: set[str] = set()
_env: tuple[str, ...] | None = None   # environment secrets the sorted list was built from
_values: tuple[str, ...] = ()          # every secret, longest first


def register_secret(value: str | None) -> None:
    """Mask ``value`` in everything written from now on (too short or placeholder: ignored)."""
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_LENGTH or value.lower() in _PLACEHOLDERS:
        return
    global _env
    with _lock:
        _registered.add(value)
        _env = None  # rebuilt on next use


_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.IGNORECASE)


def register_secret_header(name: str, value: str) -> None:
    """Register an HTTP header's value when its name says it is a credential
    (``Authorization: Bearer X`` registers the whole value and ``X``)."""
    if _SECRET_HEADER.search(name):
        register_secret(value)
        register_secret(value.split()[-1] if value.split() else value)


def secret_values() -> tuple[str, ...]:
    """Registered and environment secrets, longest first (a key containing another wins)."""
    global _env, _values
    env = tuple(v for v in (os.environ.get(n, "").strip() for n in ENV_SECRETS)
                if len(v) >= MIN_LENGTH and v.lower() not in _PLACEHOLDERS)
    if env != _env:
        with _lock:
            _values = tuple(sorted(set(env) | _registered, key=len, reverse=True))
            _env = env
    return _values


def redact(text: str) -> str:
    """``text`` with every secret value the process knows replaced by ``***`` (nothing
    else: this is what every written byte of the user's data goes through)."""
    for value in secret_values():
        if value in text:
            text = text.replace(value, MASK)
    return text


def redact_message(text: str) -> str:
    """``redact``, and bearer tokens and ``sk-`` keys masked by their shape: for messages
    and tracebacks of providers and libraries, never for the user's data."""
    text = redact(text)
    if "sk-" in text:
        text = _SK.sub("sk-" + MASK, text)
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(r"\1" + MASK, text)
    return text


def redact_value(value: Any) -> Any:
    """``redact`` applied to every string inside lists and dicts (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """Renders a record's message (and traceback) once, redacted, before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let the handler report it as usual
            return True
        record.msg, record.args = redact(message), None
        # A traceback is the libraries' text, not the user's: shapes are masked there too.
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_message(record.exc_text)
        return True


_filter = RedactingFilter()
_logger = logging.getLogger("noisegauge")
if _filter not in _logger.filters:
    _logger.addFilter(_filter)
