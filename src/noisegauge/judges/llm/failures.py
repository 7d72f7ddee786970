"""What a failed request means, and how to say it safely.

``classify`` tells transport which errors are worth retrying (and when the server asked us
to come back); an answer that refuses the request's output mode is not (``ModeRefused``
then makes the judge try the next mode). ``redact`` and ``public_url`` keep keys out of
every message (the process-wide redaction is ``noisegauge.infra.secrets``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from ...infra.secrets import redact_message
from ...infra.transport import Failure
from .modes import refused

__all__ = ["NO_KEY", "ModeRefused", "body_text", "classify", "public_url", "redact"]

NO_KEY = "no-key"


def public_url(url: str) -> str:
    """``url`` without user info or query string, which may carry credentials.

    >>> public_url("https://user:secret@example.com:8443/v1/?key=abc")
    'https://example.com:8443/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def redact(text: str, key: str | None) -> str:
    """Mask ``key``, bearer tokens and anything shaped like an OpenAI key (for the messages
    of failed requests: an endpoint's or the SDK's text, not the user's)."""
    if key and key != NO_KEY:
        text = text.replace(key, "***")
    return redact_message(text)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                return None  # an HTTP date: let backoff decide
    return None


def body_text(exc: BaseException) -> str:
    """An error answer's body (or message) as text, for reading what it names."""
    body = getattr(exc, "body", None)
    if body is None:
        return str(exc)
    return body if isinstance(body, str) else json.dumps(body, default=str)


class ModeRefused(Exception):
    """The server refused a request for its output mode (``modes.refused``)."""

    def __init__(self, mode: str, error: BaseException) -> None:
        self.mode = mode
        self.error = error
        super().__init__(mode)


def classify(exc: BaseException, mode: str | None = None) -> Failure:
    """Which SDK errors are worth retrying, and when the server asked us to come back.
    An answer that refuses the output ``mode`` is not (the next mode is tried instead)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return Failure(retryable=True, timed_out=True)
    if isinstance(exc, openai.APIConnectionError):
        return Failure(retryable=True)
    if isinstance(exc, openai.APIStatusError):
        if mode is not None and refused(exc.status_code, body_text(exc), mode):
            return Failure(retryable=False)
        if exc.status_code == 429 and getattr(exc, "code", None) == "insufficient_quota":
            return Failure(retryable=False)  # out of credit: waiting will not help
        retryable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
        return Failure(retryable, _retry_after(exc.response.headers) if retryable else None)
    return Failure(retryable=False)
