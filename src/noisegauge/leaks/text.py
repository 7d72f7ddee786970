"""The leak figures in words: a source's label, the cumulative line, labels-vs-judge agreement."""

from __future__ import annotations

from .aggregate import Agreement, Leaks, SourceLeaks
from .identity import DIGEST_PREFIX

__all__ = ["agreement_line", "cumulative_line", "frac", "pct", "source_label"]


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def frac(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def source_label(s: SourceLeaks | str, snippet: str | None = None, width: int = 48) -> str:
    """A source's id; for one named by a digest, the digest and the start of its text."""
    name = s if isinstance(s, str) else s.source
    snippet = snippet if isinstance(s, str) else s.snippet
    if not name.startswith(DIGEST_PREFIX) or not snippet:
        return name
    text = " ".join(snippet.split())
    return f'{name[:len(DIGEST_PREFIX) + 8]}… "{text[:width]}{"…" if len(text) > width else ""}"'


def cumulative_line(leaks: Leaks, n: int = 5) -> str | None:
    """"5 sources carry 62% of leaked claims" (None when nothing leaked)."""
    n = leaks.headline_count(n)
    carried = leaks.carried(n)
    if carried is None:
        return None
    noun = "source carries" if n == 1 else "sources carry"
    return (f"{n} {noun} {carried:.0%} of leaked claims "
            f"({leaks.cumulative[n - 1]:,} of {leaks.leaked_claims:,}).")


def agreement_line(leaks: Leaks | Agreement | None) -> str | None:
    """Labels against the judge's relevance in one line (None when not both were kept)."""
    a = leaks.agreement if isinstance(leaks, Leaks) else leaks
    if a is None:
        return None
    kappa = "undefined (one class only)" if a.kappa is None else f"{a.kappa:.2f}"
    return (f"labels vs the judge's relevance on {a.n:,} chunks: agree {pct(a.share)}, "
            f"Cohen's kappa {kappa}; relevant by labels only {a.labels_only:,}, by the judge "
            f"only {a.judge_only:,}.")
