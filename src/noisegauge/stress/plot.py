"""The degradation curve as an image (matplotlib, extra ``plot``; Agg backend, no display)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import MissingDependency

__all__ = ["plot_curve", "PLOTTED"]

#: The metrics drawn: the two noise modes, hallucination, and answer correctness.
PLOTTED: tuple[str, ...] = ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                            "hallucination", "precision")


def plot_curve(curve: Mapping[str, Any], path: str | Path, *, title: str = "",
               metrics: Sequence[str] = PLOTTED) -> Path:
    """Mean per level with its 95% interval as a band; undefined points are gaps."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # never needs a display; must precede pyplot
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependency("curve.png", "plot", "matplotlib") from exc
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for name in metrics:
        points = curve["metrics"].get(name, [])
        xs = [p["level"] for p in points]
        ys = [p["mean"] if p["mean"] is not None else float("nan") for p in points]
        lo = [p["ci"][0] if p["ci"] else float("nan") for p in points]
        hi = [p["ci"][1] if p["ci"] else float("nan") for p in points]
        (line,) = ax.plot(xs, ys, marker="o", label=name)
        ax.fill_between(xs, lo, hi, alpha=0.15, color=line.get_color())
    ax.set_xlabel("injected distractor chunks per question")
    ax.set_ylabel("mean over questions (95% interval)")
    ax.set_xticks(list(curve["levels"]))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"noise stress: {title}" if title else "noise stress", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
