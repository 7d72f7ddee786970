"""Arize Phoenix as a span store: ``noisegauge score phoenix:PROJECT`` reads a project's spans
through Phoenix's own client (one sample per trace, the mapping of
``noisegauge.io.openinference``), and ``--annotate`` writes each trace's metrics back as
annotations on its root span, where the team already looks.

Imports Phoenix's client lazily (extra ``phoenix``); the experiment evaluator is in
``phoenix_evaluator``.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MissingDependency

try:
    import phoenix.client  # noqa: F401  (here, so a missing extra names this one)
except ImportError as exc:
    raise MissingDependency("reading spans from Phoenix", "phoenix",
                            "arize-phoenix-client") from exc

from ..io.openinference import References, TraceSpan, load_references, rows_from_spans
from ..io.readers import Source
from ..io.rows import RawRow

__all__ = ["ANNOTATED_METRICS", "ANNOTATION_PREFIX", "PREFIX", "PhoenixProject", "annotate",
           "annotations_of", "client_of", "open_project", "parse_since",
           "span_of"]

log = logging.getLogger("noisegauge")

#: ``noisegauge score phoenix:PROJECT``.
PREFIX = "phoenix:"
#: Annotation names are ``noisegauge.METRIC``: apart from Phoenix's own evals of one name.
ANNOTATION_PREFIX = "noisegauge."
#: The metrics written back by ``--annotate``; and per metric the claim buckets it counts
#: (their chunks are the explanation).
ANNOTATED_METRICS: dict[str, tuple[str, ...]] = {
    "noise_sensitivity_relevant": ("relevant_noise",),
    "noise_sensitivity_irrelevant": ("irrelevant_noise",),
    "hallucination": ("hallucination",),
    "faithfulness": ("hallucination", "self_knowledge"),  # the claims no chunk supports
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def client_of(url: str | None = None) -> Any:
    """Phoenix's client for ``url`` (None: its own default, ``PHOENIX_COLLECTOR_ENDPOINT``
    or http://localhost:6006)."""
    from phoenix.client import Client

    return Client(base_url=url) if url else Client()


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``--since``: an ISO 8601 time (UTC unless it says otherwise) or a duration back from
    now (``90m``, ``24h``, ``7d``, ``2w``)."""
    m = _DURATION.match(text)
    if m is not None:
        return (now or datetime.now(timezone.utc)) - timedelta(**{_UNITS[m[2]]: float(m[1])})
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"--since {text!r}: expected an ISO 8601 time "
                           "(2026-12-01 or 2026-12-01T08:00:00Z) or a duration back from now "
                           "(90m, 24h, 7d, 2w)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _ns(stamp: Any) -> int:
    """Phoenix's ISO start time as nanoseconds since the epoch (0 when unreadable)."""
    if not isinstance(stamp, str):
        return 0
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    delta = when - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def span_of(span: Mapping[str, Any]) -> TraceSpan:
    """A span as Phoenix's REST API returns it (``v1.Span``) as a ``TraceSpan``."""
    context = span.get("context") or {}
    attrs = span.get("attributes") or {}
    problems: tuple[str, ...] = ()
    if not isinstance(attrs, Mapping):
        problems = (f"attributes has type {type(attrs).__name__}, expected an object; ignored",)
        attrs = {}
    kind = span.get("span_kind")
    return TraceSpan(trace_id=str(context.get("trace_id", "")),
                     span_id=str(context.get("span_id", "")),
                     parent_id=span.get("parent_id") or None, name=str(span.get("name", "")),
                     kind=kind if isinstance(kind, str) and kind != "UNKNOWN" else None,
                     start_time_ns=_ns(span.get("start_time")), attributes=attrs,
                     problems=problems)


@dataclass
class PhoenixProject:
    """A project's traces as a ``Source`` (rows in order of the traces' start), and the root
    span of each trace (what ``annotate`` writes on)."""

    project: str
    client: Any
    source: Source
    roots: dict[str, str] = field(default_factory=dict)
    #: Traces read only in part (their root started before ``--since``): left out, said.
    partial: list[str] = field(default_factory=list)


def open_project(project: str, *, url: str | None = None, since: datetime | None = None,
                 references: References | str | Path | None = None,
                 client: Any = None) -> PhoenixProject:
    """Read ``project``'s spans from the Phoenix server at ``url`` (all of them, or those
    that started at or after ``since``), one row per trace."""
    if not project:
        raise InvalidInput("phoenix:PROJECT needs a project name (phoenix:default)")
    refs = (load_references(references) if isinstance(references, (str, Path))
            else references)
    client = client if client is not None else client_of(url)
    where = url or "Phoenix's default URL (PHOENIX_COLLECTOR_ENDPOINT, else localhost:6006)"
    import httpx

    try:
        raw = client.spans.get_spans(project_identifier=project, start_time=since,
                                     limit=sys.maxsize)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 404:
            raise InvalidInput(f"phoenix:{project}: no such project at {where}") from None
        raise InvalidInput(f"phoenix:{project}: Phoenix answered {exc}") from None
    except httpx.HTTPError as exc:
        raise InvalidInput(f"phoenix:{project}: cannot reach Phoenix at {where} ({exc}); "
                           "--phoenix-url URL names the server") from None
    spans = sorted((span_of(s) for s in raw), key=lambda s: (s.start_time_ns, s.span_id))
    roots = {s.trace_id: s.span_id for s in spans if s.parent_id is None}
    partial = sorted({s.trace_id for s in spans} - roots.keys())
    if partial:
        # --since cut these: their root started earlier; half a trace would be a wrong sample
        log.warning("phoenix:%s: %d trace(s) started before --since and are left out: %s",
                    project, len(partial), ", ".join(partial[:10])
                    + (" ..." if len(partial) > 10 else ""))
    kept = [s for s in spans if s.trace_id in roots]
    if not kept:
        raise InvalidInput(f"phoenix:{project}: no traces"
                           + (f" started since {since.isoformat()}" if since else ""))
    rows: list[RawRow] = list(rows_from_spans(kept, refs))
    return PhoenixProject(project, client, Source(rows, len(rows), f"phoenix:{project}"),
                          roots, partial)


# --- annotations -----------------------------------------------------------------------------

def _chunk_ids(row: Mapping[str, Any]) -> list[str]:
    given = (row.get("input") or {}).get("chunk_ids")
    if isinstance(given, list):
        return [str(c) for c in given]
    return [str(c.get("source") or f"chunk {c.get('index')}") for c in row.get("chunks") or ()]


def _explanation(row: Mapping[str, Any], buckets: Sequence[str]) -> tuple[str, list[str]]:
    """The claims of ``buckets`` and the chunk ids each came from; and those ids."""
    ids = _chunk_ids(row)
    parts: list[str] = []
    leaked: list[str] = []
    for claim in row.get("response_claims") or ():
        if claim.get("bucket") not in buckets:
            continue
        sources = [ids[i] if 0 <= i < len(ids) else f"chunk {i}"
                   for i in claim.get("leaked_from") or claim.get("entailed_by") or ()]
        leaked.extend(s for s in sources if s not in leaked)
        came = f" (from {', '.join(sources)})" if sources else ""
        parts.append(f"{claim.get('text', '')!r}{came}")
    if not parts:
        return "no such claim", leaked
    return f"{len(parts)} claim(s): " + "; ".join(parts), leaked


def annotations_of(row: Mapping[str, Any], span_id: str) -> list[dict[str, Any]]:
    """Phoenix span annotations (``SpanAnnotationData``) for one output row.

    A defined metric: its score, and as the explanation the claims it counts with the chunk
    ids they leaked from (``metadata.leaked_from``). An undefined one: label ``undefined``
    and the reason. An error row: one ``noisegauge.error`` annotation with the reason.
    """
    status = row.get("status")
    if status == "error":
        return [{"name": ANNOTATION_PREFIX + "error", "span_id": span_id,
                 "annotator_kind": "CODE",
                 "result": {"label": "error", "explanation": str(row.get("reason"))}}]
    out = []
    metrics = row.get("metrics") or {}
    undefined = row.get("undefined") or {}
    for name, buckets in ANNOTATED_METRICS.items():
        value = metrics.get(name)
        result: dict[str, Any]
        meta: dict[str, Any] = {"status": status}
        if value is None:
            reason = undefined.get(name) or row.get("reason") or "undefined"
            result = {"label": "undefined", "explanation": str(reason)}
        else:
            text, leaked = _explanation(row, buckets)
            result = {"score": float(value), "explanation": text}
            meta["leaked_from"] = leaked
        out.append({"name": ANNOTATION_PREFIX + name, "span_id": span_id,
                    "annotator_kind": "CODE", "result": result, "metadata": meta})
    return out


def annotate(project: PhoenixProject, rows: Iterable[Mapping[str, Any]]) -> tuple[int, list[str]]:
    """Write each row's metrics on its trace's root span; the number of traces annotated,
    and what was not (a row whose trace has no root span here)."""
    batch: list[dict[str, Any]] = []
    done = 0
    skipped: list[str] = []
    for row in rows:
        tid = str(row.get("id"))
        span_id = project.roots.get(tid)
        if span_id is None:
            skipped.append(f"{tid}: no root span in phoenix:{project.project}")
            continue
        batch.extend(annotations_of(row, span_id))
        done += 1
    for start in range(0, len(batch), 500):  # one request per 500: a big project in pieces
        project.client.spans.log_span_annotations(span_annotations=batch[start:start + 500],
                                                  sync=True)
    return done, skipped

