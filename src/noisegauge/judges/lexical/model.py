"""The learned combiner: a logistic model over ``FEATURES``, read from a shipped JSON file.

Pure Python on purpose (no numpy at inference). ``training/train_lexical.py`` writes the
file; its ``version`` names the weights and is part of the judge's identity.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .features import FEATURES

__all__ = ["Combiner", "load_combiner", "WEIGHTS_FILE"]

WEIGHTS_FILE = "weights.json"


@dataclass(frozen=True)
class Combiner:
    """``p(entailed) = sigmoid(intercept + sum(coef * (x - mean) / scale))``."""

    version: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, x: list[float]) -> float:
        z = self.intercept
        for xi, m, s, c in zip(x, self.mean, self.scale, self.coef):
            z += c * (xi - m) / s
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combiner:
        feats = tuple(data["features"])
        if feats != FEATURES:
            raise ValueError(f"weights were trained on features {feats}, this code computes {FEATURES}; "
                             "retrain with training/train_lexical.py")
        return cls(str(data["version"]), feats, tuple(map(float, data["mean"])),
                   tuple(map(float, data["scale"])), tuple(map(float, data["coef"])),
                   float(data["intercept"]), float(data["threshold"]))


def load_combiner(path: str | Path | None = None) -> Combiner:
    """The shipped weights, or those in ``path``."""
    if path is None:
        text = resources.files(__package__).joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return Combiner.from_dict(data)
