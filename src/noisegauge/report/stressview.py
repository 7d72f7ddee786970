"""A ``noisegauge stress --out DIR`` directory, read for the report: the curve, the flips and
the run settings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

__all__ = ["StressView", "load_stress"]


@dataclass(frozen=True)
class StressView:
    source: str
    curve: dict[str, Any]
    flips: list[dict[str, Any]] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path}: unreadable ({exc})") from exc


def load_stress(directory: str | Path) -> StressView:
    """Read ``curve.json`` (required), ``flips.jsonl`` and ``run.json`` (optional)."""
    d = Path(directory)
    curve_path = d / "curve.json"
    if not curve_path.is_file():
        raise InvalidInput(f"{d}: no curve.json; is it a `noisegauge stress --out` directory?")
    curve = _json(curve_path)
    if not isinstance(curve, dict) or not isinstance(curve.get("metrics"), dict) \
            or not isinstance(curve.get("levels"), list):
        raise InvalidInput(f"{curve_path}: expected {{\"levels\": [...], \"metrics\": {{...}}}}")
    for name, points in curve["metrics"].items():
        if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
            raise InvalidInput(f"{curve_path}: metrics.{name} must be a list of points")
    flips: list[dict[str, Any]] = []
    flips_path = d / "flips.jsonl"
    if flips_path.is_file():
        for n, line in enumerate(flips_path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{flips_path}, line {n}: not JSON ({exc.msg})") from exc
                if isinstance(item, dict):
                    flips.append(item)
    run_path = d / "run.json"
    run = _json(run_path) if run_path.is_file() else {}
    return StressView(str(d), curve, flips, run if isinstance(run, dict) else {})
