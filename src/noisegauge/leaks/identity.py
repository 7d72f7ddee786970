"""A chunk's source: its id when the data gives one, else a digest of its normalised text.

The same text retrieved by two samples is one source, whatever its spacing, case or Unicode
form; the digest is stable across runs, machines and Python versions (no ``hash()``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence

__all__ = ["DIGEST_PREFIX", "chunk_sources", "normalise", "text_digest"]

#: Marks a source named by its text rather than by an id the data gave.
DIGEST_PREFIX = "text:"


def normalise(text: str) -> str:
    """NFKC, case-folded, runs of white space as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_digest(text: str) -> str:
    """``text:`` and 16 hex digits of BLAKE2b over the normalised text.

    >>> text_digest("Pro plan:  $20") == text_digest("pro plan: $20")
    True
    """
    digest = hashlib.blake2b(normalise(text).encode("utf-8"), digest_size=8).hexdigest()
    return DIGEST_PREFIX + digest


def chunk_sources(texts: Sequence[str], ids: Sequence[str | None] | None = None) -> tuple[str, ...]:
    """One source per chunk: its id where given, else its text's digest."""
    given = list(ids or ())
    out: list[str] = []
    for j, text in enumerate(texts):
        name = given[j] if j < len(given) else None
        out.append(name if name is not None else text_digest(text))
    return tuple(out)
