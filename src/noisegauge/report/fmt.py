"""Labels and number formats shared by the report's sections."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import catalogue
from ..engine.catalogue import label, short
from .markup import Html, el

__all__ = ["ci_text", "direction", "fmt", "label", "lower_names", "sample_link", "short"]


def lower_names() -> list[str]:
    """Every metric where lower is better (the page script reads them)."""
    return sorted(s.name for s in catalogue.all_specs() if s.direction == "lower")


def fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def ci_text(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def direction(name: str) -> Html | None:
    if catalogue.neutral(name):
        return None
    low = catalogue.lower_is_better(name)
    return el("span", {"class": "dir", "title": "lower is better" if low else "higher is better"},
              "↓" if low else "↑")


def sample_link(pos: int, label: str) -> Html:
    return el("a", {"href": f"#s={pos}", "class": "chip"}, label)
