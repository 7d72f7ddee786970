"""``[tool.noisegauge]`` in ``pyproject.toml``: the bars (and defaults) a project holds itself to.

```toml
[tool.noisegauge]
judge = "lexical"                       # optional: the judge spec used when none is given
metrics = ["noise_sensitivity", "faithfulness"]   # optional

[tool.noisegauge.thresholds]
noise_sensitivity_relevant = "<=0.2"
faithfulness = ">=0.8"
```

Read by ``assert_scores`` (pytest) and ``noisegauge score --config``. Unknown keys are
refused with their name, so a typo cannot silently switch a gate off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InvalidInput, MissingDependency
from .thresholds import Threshold, parse_thresholds

__all__ = ["ProjectConfig", "find_pyproject", "load_config", "SEARCH_ROOT"]

#: Where a search for pyproject.toml starts when none is named: the pytest plugin sets it to
#: pytest's rootdir for ``assert_scores``; None means the working directory.
SEARCH_ROOT: Path | None = None

_KEYS = {"judge", "metrics", "thresholds"}


@dataclass(frozen=True)
class ProjectConfig:
    """What ``[tool.noisegauge]`` says; empty when there is no such table."""

    path: Path | None = None
    judge: str | None = None
    metrics: tuple[str, ...] | None = None
    thresholds: tuple[Threshold, ...] = field(default_factory=tuple)


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (default: the working directory)."""
    here = Path(start or SEARCH_ROOT or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError as exc:
            raise MissingDependency("reading pyproject.toml on Python 3.10", "config",
                                    "tomli") from exc
    try:
        with path.open("rb") as f:
            data: dict[str, Any] = tomllib.load(f)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc})") from exc
    return data


def load_config(path: str | os.PathLike[str] | None = None, *,
                search_from: str | os.PathLike[str] | None = None) -> ProjectConfig:
    """``[tool.noisegauge]`` of ``path`` (a pyproject.toml, or a TOML file holding the same
    table at its top or under ``tool.noisegauge``); without ``path``, of the nearest
    pyproject.toml above ``search_from``. No file or no table gives an empty config."""
    if path is None:
        found = find_pyproject(search_from)
        if found is None:
            return ProjectConfig()
        target = found
    else:
        target = Path(path)
        if not target.is_file():
            raise InvalidInput(f"config file not found: {target}")
    data = _toml(target)
    table = data.get("tool", {}).get("noisegauge") if isinstance(data.get("tool"), Mapping) else None
    if table is None and path is not None and target.name != "pyproject.toml":
        table = data  # a dedicated noisegauge.toml holds the table at its top
    if table is None:
        return ProjectConfig(path=target)
    return _parse(table, target)


def _parse(table: Any, path: Path) -> ProjectConfig:
    where = f"{path} [tool.noisegauge]"
    if not isinstance(table, Mapping):
        raise InvalidInput(f"{where}: expected a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown key(s) {', '.join(unknown)}; expected "
                           f"{', '.join(sorted(_KEYS))} (bars go under "
                           "[tool.noisegauge.thresholds])")
    judge = table.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise InvalidInput(f"{where}: judge must be a string such as 'lexical'")
    metrics = table.get("metrics")
    if metrics is not None and (not isinstance(metrics, list)
                                or not all(isinstance(m, str) for m in metrics)):
        raise InvalidInput(f"{where}: metrics must be a list of metric names")
    raw = table.get("thresholds", {})
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{where}: thresholds must be a table of METRIC = \"<=0.2\" lines")
    try:
        thresholds = tuple(parse_thresholds(raw))
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from exc
    return ProjectConfig(path=path, judge=judge,
                         metrics=tuple(metrics) if metrics is not None else None,
                         thresholds=thresholds)
