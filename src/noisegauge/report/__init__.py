"""The HTML report: one self-contained file (inline CSS, script and SVG; no network).

>>> from noisegauge.report import render_report  # doctest: +SKIP
>>> html = render_report(rows, title="support bot")  # rows: ``score --out`` JSONL rows

Modules: ``data`` (rows -> view model), ``align`` (claim spans), ``diagnosis`` (bands,
quadrants, verdict), ``compare``, ``stressview``, ``svg``, ``html`` (the page), ``markup``
(escaping).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..infra.outputs import write_text
from ..infra.secrets import redact
from .compare import compare_runs
from .data import ChunkTable, RunInfo, build_model, read_results, sample_view
from .html import render_page
from .people import people_section
from .stressview import load_stress

if TYPE_CHECKING:
    from ..people.estimate import Estimate

__all__ = ["RunInfo", "file_info", "now_text", "read_results", "render_report", "run_label",
           "write_report"]


def now_text() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _judges(rows: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    for row in rows:
        if isinstance(row.get("judges"), list) and row["judges"]:
            return tuple(j for j in row["judges"] if isinstance(j, Mapping))
    return ()


def render_report(rows: Sequence[Mapping[str, Any]], *, title: str = "noisegauge run",
                  info: RunInfo | None = None,
                  compare: Sequence[Mapping[str, Any]] | None = None, compare_label: str = "other",
                  label: str = "this run", stress: str | os.PathLike[str] | None = None,
                  estimate: Estimate | None = None) -> str:
    """The report of result ``rows`` (the ``score --out`` JSONL shape) as an HTML string;
    ``compare``: rows of another run of the same inputs; ``stress``: a stress output dir;
    ``estimate``: people's labels against these rows (``noisegauge.people.estimate``)."""
    if info is None:
        info = RunInfo(title=title, judges=_judges(rows), generated_at=now_text())
    elif not info.judges:
        info = RunInfo(info.title, info.source, _judges(rows), info.scored_at, info.generated_at or now_text())
    model = build_model(rows, info)
    comparison = other_views = None
    if compare is not None:
        comparison = compare_runs(rows, compare, model.names, other_label=compare_label,
                                  this_label=label)
        table: ChunkTable = model.chunks
        other_views = [sample_view(r, p, model.names, table) for p, r in enumerate(compare)]
    view = load_stress(Path(stress)) if stress is not None else None
    people = people_section(estimate) if estimate is not None and estimate.metrics else None
    return render_page(model, comparison=comparison, other_samples=other_views, stress=view,
                       people=people)


def write_report(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]], **kwargs: Any) -> Path:
    """``render_report`` written to ``path`` (atomically: a temp file renamed into place)."""
    text = redact(render_report(rows, **kwargs))  # no key in a file we write
    return write_text(path, text)


_GENERIC_STEMS = {"results", "result", "scores", "out", "output"}


def run_label(results: Path, rows: Sequence[Mapping[str, Any]]) -> str:
    """A run's name in compare views: dataset, judge and date ("support_bot · lexical 4.11 ·
    2026-12-01 19:40"). The dataset is the file's stem, or its folder when the stem says
    nothing (two runs both called results.jsonl must not both be "results.jsonl")."""
    dataset = results.stem
    if dataset.lower() in _GENERIC_STEMS and results.resolve().parent.name:
        dataset = results.resolve().parent.name
    judges = []
    for j in _judges(rows):
        kind, model, version = j.get("judge"), j.get("model"), j.get("version")
        judges.append(f"{kind}:{model}" if model and kind != "lexical"
                      else f"{kind} {version}" if version else str(kind))
    stamp = _dt.datetime.fromtimestamp(results.stat().st_mtime, _dt.timezone.utc)
    return " · ".join([dataset, *(["+".join(judges)] if judges else []),
                       stamp.strftime("%Y-%m-%d %H:%M")])


def file_info(results: Path, title: str | None = None, source: str | None = None) -> RunInfo:
    """Run information for a results file: its name and the time it was written."""
    stamp = _dt.datetime.fromtimestamp(results.stat().st_mtime, _dt.timezone.utc)
    return RunInfo(title=title or results.name, source=source or str(results),
                   scored_at=stamp.strftime("%Y-%m-%d %H:%M UTC"), generated_at=now_text())
