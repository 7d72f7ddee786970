"""The learned combiner: gradient-boosted trees over ``FEATURES``, read from a shipped JSON file.

Pure Python on purpose (no numpy or sklearn at inference). ``training/train_lexical.py``
writes the file; its ``version`` names the weights and is part of the judge's identity.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .features import FEATURES

__all__ = ["WEIGHTS_FILE", "Combiner", "Tree", "load_combiner"]

WEIGHTS_FILE = "weights.json"


@dataclass(frozen=True)
class Tree:
    """One regression tree in sklearn's array layout (a leaf has ``left == -1``)."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def __call__(self, x: list[float]) -> float:
        node = 0
        left, right, feature, threshold = self.left, self.right, self.feature, self.threshold
        while left[node] != -1:
            node = left[node] if x[feature[node]] <= threshold[node] else right[node]
        return self.value[node]


@dataclass(frozen=True)
class Combiner:
    """``p(entailed) = sigmoid(init + learning_rate * sum(tree(x)))``."""

    version: str
    init: float
    learning_rate: float
    trees: tuple[Tree, ...]
    threshold: float
    band: tuple[float, float] | None = None
    _sum: Callable[[list[float]], float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sum", _compile(self.trees, self.version))

    def probability(self, x: list[float]) -> float:
        z = self.init + self.learning_rate * self._sum(x)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combiner:
        feats = tuple(data["features"])
        if feats != FEATURES:
            raise ValueError(f"weights were trained on features {feats}, this code computes "
                             f"{FEATURES}; retrain with training/train_lexical.py")
        trees = tuple(Tree(tuple(t["feature"]), tuple(map(float, t["threshold"])),
                           tuple(t["left"]), tuple(t["right"]), tuple(map(float, t["value"])))
                      for t in data["trees"])
        band = data.get("uncertain_band")
        return cls(str(data["version"]), float(data["init"]), float(data["learning_rate"]),
                   trees, float(data["threshold"]),
                   (float(band[0]), float(band[1])) if band else None)


def _expr(t: Tree, node: int) -> str:
    if t.left[node] == -1:
        return repr(float(t.value[node]))
    return (f"({_expr(t, t.left[node])} if x[{int(t.feature[node])}] <= "
            f"{float(t.threshold[node])!r} else {_expr(t, t.right[node])})")


def _compile(trees: tuple[Tree, ...], version: str) -> Callable[[list[float]], float]:
    """The trees' sum as one Python expression of nested conditionals: the same arithmetic as
    calling each ``Tree``, several times faster. Built only from the parsed numbers."""
    body = " + ".join(_expr(t, 0) for t in trees) or "0.0"
    code = compile(f"lambda x: {body}", f"<lexical weights {version}>", "eval")
    fn: Callable[[list[float]], float] = eval(code, {"__builtins__": {}})
    return fn


def load_combiner(path: str | Path | None = None) -> Combiner:
    """The shipped weights, or those in ``path``."""
    if path is None:
        text = resources.files(__package__).joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return Combiner.from_dict(data)
