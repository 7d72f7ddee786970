"""``noisegauge score``'s CI options: ``--config`` (bars from ``[tool.noisegauge]``),
``--junit`` and ``--markdown`` (also appended to ``$GITHUB_STEP_SUMMARY`` when it is set).

Kept apart from ``score.py`` so the command gains them with a decorator and one call.
``--fail-above M=V`` is the bar ``M <= V`` and ``--fail-below M=V`` is ``M >= V``; a bar
from the config file for the same metric and direction is replaced by the flag's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from ..config import ProjectConfig, load_config
from ..thresholds import Threshold

__all__ = ["ci_options", "bars", "config_of", "gates_of", "write_ci_outputs"]

F = TypeVar("F", bound=Callable[..., Any])


def ci_options(f: F) -> F:
    """Add ``--config``, ``--junit`` and ``--markdown`` to a click command."""
    f = click.option("--markdown", "markdown_path", type=click.Path(path_type=Path, dir_okay=False),
                     help="Write a Markdown summary (bars, metrics, worst samples); also "
                          "appended to $GITHUB_STEP_SUMMARY when set.")(f)
    f = click.option("--junit", "junit_path", type=click.Path(path_type=Path, dir_okay=False),
                     help="Write JUnit XML: a test case per bar and per sample that fails "
                          "one (CI test tabs: GitHub, GitLab, Jenkins).")(f)
    f = click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
                     help="Read bars (and judge, metrics) from [tool.noisegauge] of this "
                          "pyproject.toml; without it, the nearest pyproject.toml is not read.")(f)
    return f


def config_of(path: Path | None) -> ProjectConfig:
    """The config file's settings (empty without ``--config``: a CLI run reads no file it
    was not pointed at)."""
    return load_config(path) if path is not None else ProjectConfig()


def bars(gates: Sequence[tuple[str, float, str]], config: ProjectConfig) -> list[Threshold]:
    """Every bar of the run: the config's, with the flags' replacing the same metric and
    direction. ``gates`` are the CLI's ``(metric, value, "above" | "below")``."""
    flags = [Threshold(name, "<=" if d == "above" else ">=", value) for name, value, d in gates]
    given = {(t.metric, t.lower_is_better) for t in flags}
    return [t for t in config.thresholds if (t.metric, t.lower_is_better) not in given] + flags


def gates_of(thresholds: Sequence[Threshold]) -> list[tuple[str, float, str]]:
    """The config's inclusive bars as CLI gates; a strict one (``<``, ``>``) is refused,
    since the CLI's gates are inclusive."""
    out = []
    for t in thresholds:
        if t.op in ("<", ">"):
            raise click.BadParameter(f"{t}: the command's gates are inclusive; write "
                                     f"{t.metric} = \"{t.op}={t.value:g}\"", param_hint="--config")
        out.append((t.metric, t.value, "above" if t.op == "<=" else "below"))
    return out


def write_ci_outputs(rows: Iterable[Mapping[str, Any]], metric_names: Sequence[str],
                     thresholds: Sequence[Threshold], *, title: str,
                     junit: Path | None, markdown: Path | None,
                     judges: Sequence[Mapping[str, Any]] = (), elapsed: float = 0.0) -> list[Path]:
    """Write the JUnit and Markdown files asked for; returns what was written."""
    if junit is None and markdown is None:
        return []
    from ..report.gate import GateReport
    from ..report.junit import write_junit
    from ..report.markdown import write_markdown

    gate = GateReport.from_rows(rows, metric_names, thresholds, title=title, judges=judges,
                                elapsed=elapsed)
    written = []
    if junit is not None:
        written.append(write_junit(junit, gate))
    if markdown is not None:
        written += write_markdown(markdown, gate)
    return written
