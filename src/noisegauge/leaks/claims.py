"""Which response claims leaked, and from which chunks, read from a result row's evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LEAK_KINDS", "ints", "leak_kind"]

#: The kinds of leaked claims, in the order tables show them (bucket names of the evidence,
#: and the report's "misattributed").
LEAK_KINDS: tuple[str, ...] = ("relevant_noise", "irrelevant_noise", "misattributed")


def ints(value: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in value) if isinstance(value, list) else ()


def leak_kind(claim: Mapping[str, Any]) -> tuple[str | None, tuple[int, ...]]:
    """A leaked claim's kind and leaking chunks; ``(None, ())`` for any other claim.

    Noise is a wrong claim a chunk entails (``leaked_from``); a misattributed claim carries
    a detail a chunk states about another entity (``misattributed_from``), and is shown
    apart whatever its bucket, as the report does.
    """
    mis = ints(claim.get("misattributed_from"))
    leaked = ints(claim.get("leaked_from"))
    if mis:
        return "misattributed", tuple(dict.fromkeys((*leaked, *mis)))
    bucket = claim.get("bucket")
    if leaked and bucket in ("relevant_noise", "irrelevant_noise"):
        return str(bucket), leaked
    return None, ()
