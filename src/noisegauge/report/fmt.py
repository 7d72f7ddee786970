"""Labels and number formats shared by the report's sections."""

from __future__ import annotations

from collections.abc import Sequence

from ..stress.compare import LOWER_IS_BETTER, NEUTRAL
from .markup import Html, el

__all__ = ["LABELS", "LOWER", "SHORT", "ci_text", "direction", "fmt", "sample_link"]

LABELS: dict[str, str] = {
    "noise_sensitivity_relevant": "noise sensitivity (relevant)",
    "noise_sensitivity_irrelevant": "noise sensitivity (irrelevant)",
    "hallucination": "hallucination", "self_knowledge": "self-knowledge",
    "faithfulness": "faithfulness", "precision": "precision", "recall": "recall", "f1": "F1",
    "claim_recall": "claim recall", "context_precision": "context precision",
    "context_utilization": "context utilization",
    "context_precision_ranked": "ranked context precision",
    "noise_misattribution": "misattributed noise",
}
SHORT: dict[str, str] = {
    "noise_sensitivity_relevant": "NS rel", "noise_sensitivity_irrelevant": "NS irr",
    "hallucination": "halluc.", "self_knowledge": "self-kn.", "faithfulness": "faithful.",
    "precision": "prec.", "recall": "recall", "f1": "F1", "claim_recall": "claim rec.",
    "context_precision": "ctx prec.", "context_utilization": "ctx util.",
    "context_precision_ranked": "ranked CP", "noise_misattribution": "misattr.",
}
LOWER = LOWER_IS_BETTER | {"noise_misattribution"}


def fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def ci_text(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def direction(name: str) -> Html | None:
    if name in NEUTRAL:
        return None
    low = name in LOWER
    return el("span", {"class": "dir", "title": "lower is better" if low else "higher is better"},
              "↓" if low else "↑")


def sample_link(pos: int, label: str) -> Html:
    return el("a", {"href": f"#s={pos}", "class": "chip"}, label)
