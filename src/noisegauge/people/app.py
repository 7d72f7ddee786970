"""The review pages: a Starlette app, served by uvicorn on 127.0.0.1 only; one page labels
a sample of RESULTS (:class:`ReviewState`), the other checks a golden set
(:class:`~noisegauge.people.golden_page.GoldenState`).

Every path starts with a random token (``/TOKEN/...``); anything else is a 404. Writes are
JSON POSTs that must come from the page itself: the ``Origin`` (or, without one,
``Sec-Fetch-Site: same-origin``) must be this server, and the ``Host`` must be loopback (a
DNS-rebound name is refused). The page is one packaged HTML file with its CSS and script
inline (no network); it puts every text into the page with ``textContent``, never as markup.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidInput, MissingDependency
from ..infra.pages import page_script
from ..io.results import history_turns
from .design import Plan
from .human import is_complete
from .labels import LabelFile, SampleLabels, digest_of, fold, sample_key

__all__ = ["Reviewed", "ReviewState", "build_app", "review_order"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


def review_order(rows: Sequence[Mapping[str, Any]], seed: int, n: int | None) -> list[str]:
    """The first ``n`` sample keys of a seeded uniform random order of the rows that are not
    errors (an error row has no claims to label)."""
    keys = [sample_key(r, i) for i, r in enumerate(rows) if r.get("status") != "error"]
    order = random.Random(seed).sample(keys, len(keys))
    return order if n is None else order[:n]


def _sample_view(row: Mapping[str, Any]) -> dict[str, Any]:
    inp = row.get("input") or {}
    chunks = list(inp.get("retrieved_contexts") or ())
    return {
        "digest": digest_of(row),
        "history": [[role, text] for role, text in history_turns(inp)],
        "question": inp.get("user_input", ""), "response": inp.get("response", ""),
        "reference": inp.get("reference", ""), "chunks": chunks,
        "claims": [{"text": c.get("text", ""), "judge": {
            "correct": bool(c.get("correct")), "chunks": list(c.get("entailed_by") or ()),
            "bucket": c.get("bucket")}} for c in row.get("response_claims") or ()],
        "reference_claims": [{"text": c.get("text", ""), "judge": {
            "in_response": bool(c.get("in_response")), "chunks": list(c.get("entailed_by") or ())}}
            for c in row.get("reference_claims") or ()],
        "judge_relevant": [bool(c.get("relevant")) for c in row.get("chunks") or ()],
    }


def _labels_view(state: SampleLabels | None) -> dict[str, Any]:
    if state is None:
        return {"claims": {}, "chunks": {}, "reference": {}, "skip": None, "looked": False}
    return {"claims": {str(i): {"label": lab, "chunks": list(ch)}
                       for i, (lab, ch) in state.claims.items()},
            "chunks": {str(j): rel for j, rel in state.chunks.items()},
            "reference": {str(i): {"in_response": inr, "chunks": list(ch)}
                          for i, (inr, ch) in state.reference.items()},
            "skip": state.skip, "looked": state.looked}


class Reviewed(Protocol):
    """What a page serves: its rows (``snapshot``), the events it accepts (``check_event``,
    raising ``InvalidInput``), the file they are appended to, and what a POST answers."""

    token: str
    port: int
    labels: LabelFile
    page: str

    def snapshot(self) -> dict[str, Any]: ...
    def check_event(self, event: Any) -> dict[str, Any]: ...
    def answer(self, event: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass
class ReviewState:
    """The rows under review, their order and the LABELS file."""

    rows: list[Mapping[str, Any]]
    labels: LabelFile
    order: list[str]
    seed: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    port: int = 0
    plan: Plan | None = None  # the designed order under review (``noisegauge sample``)
    page = "review"

    def __post_init__(self) -> None:
        self.by_key = {sample_key(r, i): r for i, r in enumerate(self.rows)}
        missing = [k for k in self.order if "input" not in self.by_key[k]]
        if missing:
            raise InvalidInput(f"{len(missing)} row(s) carry no input texts (e.g. {missing[0]}): "
                               "score them again with this noisegauge, whose rows carry the "
                               "question, answer and chunks")

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def current(self) -> dict[str, SampleLabels | None]:
        events, bad = self.labels.read()
        folded = fold(events, bad)
        return {k: folded.current(k, digest_of(self.by_key[k])) for k in self.order}

    def progress(self, states: Mapping[str, SampleLabels | None]) -> dict[str, int]:
        done = skipped = 0
        for k in self.order:
            st = states[k]
            if st is None:
                continue
            if st.skip is not None:
                skipped += 1
            elif is_complete(self.by_key[k], st):
                done += 1
        return {"done": done, "skipped": skipped, "total": len(self.order)}

    def snapshot(self) -> dict[str, Any]:
        states = self.current()
        return {"seed": self.seed, "labels": str(self.labels.path),
                "progress": self.progress(states),
                "samples": [{"id": k, **_sample_view(self.by_key[k]),
                             "labels": _labels_view(states[k])} for k in self.order]}

    def check_event(self, event: Any) -> dict[str, Any]:
        """The event a POST carries, checked against the sample it names (index ranges,
        digest); raises ``InvalidInput`` saying what is wrong."""
        if not isinstance(event, dict):
            raise InvalidInput("expected a JSON object")
        key = event.get("id")
        if key not in self.order:
            raise InvalidInput(f"unknown sample {key!r}")
        row = self.by_key[key]
        if event.get("digest") != digest_of(row):
            raise InvalidInput(f"sample {key!r} changed since the page loaded; reload it")
        kind = event.get("kind")
        allowed = {"claim": ("claim", "label", "chunks", "looked"),
                   "chunk": ("chunk", "relevant", "looked"),
                   "reference": ("claim", "in_response", "chunks", "looked"),
                   "skip": ("reason",)}
        if kind not in allowed:
            raise InvalidInput(f"unknown kind {kind!r}")
        out = {"kind": kind, "id": key, "digest": event["digest"],
               **{k: event.get(k) for k in allowed[kind] if k in event}}
        sizes = {"claim": len(row.get("response_claims") or ()),
                 "reference": len(row.get("reference_claims") or ()),
                 "chunk": len(_sample_view(row)["chunks"])}
        index = out.get("chunk" if kind == "chunk" else "claim")
        if kind != "skip" and not (isinstance(index, int) and 0 <= index < sizes[kind]):
            raise InvalidInput(f"{kind} index {index!r} out of range")
        n_chunks = sizes["chunk"]
        if any(not isinstance(j, int) or not 0 <= j < n_chunks for j in out.get("chunks") or ()):
            raise InvalidInput("a chunk index is out of range")
        if "looked" in out:
            out["looked"] = bool(out["looked"])
        fold([{**out, "_line": 0}])  # the same checks reading LABELS makes
        return out

    def answer(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """What a POST answers once ``event`` is appended: the sample's labels, the progress."""
        states = self.current()
        return {"labels": _labels_view(states[event["id"]]), "progress": self.progress(states)}


def _page(name: str) -> str:
    """``NAME.html`` with the shared ``review.css`` (then ``NAME.css``) and ``NAME.js`` inline."""
    base = resources.files("noisegauge.people").joinpath("assets")
    html = base.joinpath(f"{name}.html").read_text(encoding="utf-8")
    css = base.joinpath("review.css").read_text(encoding="utf-8")
    if name != "review":
        css += base.joinpath(f"{name}.css").read_text(encoding="utf-8")
    js = base.joinpath(f"{name}.js").read_text(encoding="utf-8")
    if name == "review":
        js = page_script(js)
    return html.replace("/*CSS*/", css).replace("/*JS*/", js)


def build_app(state: Reviewed) -> Any:
    """The ASGI app (needs the ``review`` extra)."""
    try:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
        from starlette.routing import Route
    except ImportError as exc:
        raise MissingDependency("noisegauge review", "review", "starlette and uvicorn") from exc

    page = _page(state.page)
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
               "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
               "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
                                          "style-src 'unsafe-inline'; connect-src 'self'; "
                                          "img-src 'self' data:; base-uri 'none'; "
                                          "form-action 'none'; frame-ancestors 'none'"}

    def allowed(request: Request, write: bool) -> Response | None:
        token = request.path_params.get("token", "")
        if not secrets.compare_digest(token.encode(), state.token.encode()):
            return PlainTextResponse("not found", status_code=404)
        host = request.headers.get("host", "").rsplit(":", 1)[0].strip("[]")
        if host not in LOOPBACK_HOSTS:
            return PlainTextResponse("forbidden: not a loopback Host", status_code=403)
        if not write:
            return None
        origin = request.headers.get("origin")
        own = {f"http://{h}:{state.port}" for h in LOOPBACK_HOSTS}
        if origin is not None:
            if origin not in own:
                return PlainTextResponse("forbidden: cross-origin write", status_code=403)
        elif request.headers.get("sec-fetch-site") != "same-origin":
            return PlainTextResponse("forbidden: a write needs the page's Origin", status_code=403)
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return PlainTextResponse("unsupported media type", status_code=415)
        return None

    async def index(request: Request) -> Response:
        return allowed(request, False) or HTMLResponse(page, headers=headers)

    async def api_state(request: Request) -> Response:
        return allowed(request, False) or JSONResponse(state.snapshot(), headers=headers)

    async def api_label(request: Request) -> Response:
        refused = allowed(request, True)
        if refused is not None:
            return refused
        try:
            event = state.check_event(json.loads(await request.body()))
        except (ValueError, InvalidInput) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400, headers=headers)
        state.labels.append(event)
        return JSONResponse(state.answer(event), headers=headers)

    async def api_estimate(request: Request) -> Response:
        refused = allowed(request, False)
        if refused is not None:
            return refused
        if not isinstance(state, ReviewState):  # a golden set has no judge to correct
            return PlainTextResponse("not found", status_code=404)
        from .estimate import estimate

        try:
            est = estimate(state.rows, state.labels.path, plan=state.plan)
        except (InvalidInput, MissingDependency) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400, headers=headers)
        return JSONResponse({**est.to_dict(), "notes": est.notes()}, headers=headers)

    async def not_found(request: Request) -> Response:
        return PlainTextResponse("not found", status_code=404)

    return Starlette(routes=[
        Route("/{token}/", index), Route("/{token}/api/state", api_state),
        Route("/{token}/api/label", api_label, methods=["POST"]),
        Route("/{token}/api/estimate", api_estimate),
        Route("/{path:path}", not_found, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
    ])


def open_state(rows: Sequence[Mapping[str, Any]], labels_path: str | Path, n: int | None,
               seed: int | None, plan: tuple[str, Plan] | None = None,
               ) -> tuple[ReviewState, bool]:
    """The review of ``rows`` into LABELS: the order of the session LABELS records unless
    ``seed`` (or ``n``) says otherwise, then recorded; ``plan`` (its path and ids): that
    order instead (``noisegauge sample``). Returns the state and whether a new session was
    written."""
    file = LabelFile(labels_path)
    events, bad = file.read()
    session = fold(events, bad).session or {}
    if plan is not None:
        path, designed = plan
        ids = designed.ids
        keys = {sample_key(r, i) for i, r in enumerate(rows) if r.get("status") != "error"}
        missing = [k for k in ids if k not in keys]
        if missing:
            raise InvalidInput(f"{path}: {len(missing)} planned sample(s) are not in the results "
                               f"(e.g. {missing[0]}); make the plan from these results")
        order = list(ids)[:n] if n is not None else list(ids)
        state = ReviewState(list(rows), file, order, int(session.get("seed") or 0))
        state.plan = designed
        new = (session.get("plan"), session.get("n")) != (str(path), len(order))
        if new:
            file.append({"kind": "session", "plan": str(path), "n": len(order)})
        return state, new
    new = seed is not None or n is not None or not session
    use_seed = seed if seed is not None else session.get("seed")
    if use_seed is None:
        use_seed = secrets.randbelow(2**31)
    use_n = n if n is not None else session.get("n", 30)
    state = ReviewState(list(rows), file, review_order(rows, int(use_seed), int(use_n)), int(use_seed))
    if new and (session.get("seed"), session.get("n")) != (use_seed, use_n):
        file.append({"kind": "session", "seed": use_seed, "n": use_n})
    return state, new
