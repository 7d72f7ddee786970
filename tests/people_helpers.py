"""Shared by the people-checked tests: scored rows of the bundled example, labels that copy
the judge's verdicts, and the review server on a real loopback socket in a thread."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from noisegauge.people.labels import LabelFile, digest_of, sample_key
from report_helpers import EXAMPLE

_ROWS: list[dict[str, Any]] = []


def example_rows() -> list[dict[str, Any]]:
    """examples/support_bot.jsonl scored by the offline judge (once per process)."""
    if not _ROWS:
        from noisegauge import evaluate
        _ROWS.extend(evaluate(str(EXAMPLE), cache=False, progress=False).rows())
    return [dict(r) for r in _ROWS]


def label_like_judge(path: Path, rows: Sequence[Mapping[str, Any]], count: int, *,
                     reference: bool = True, flip: Mapping[str, set[int]] | None = None) -> LabelFile:
    """Label the first ``count`` non-error rows exactly as the judge saw them (``flip``: per
    id, response claims whose correctness people see the other way)."""
    lf = LabelFile(path)
    done = 0
    for i, row in enumerate(rows):
        if row.get("status") == "error" or done >= count:
            continue
        key, d = sample_key(row, i), digest_of(row)
        for ci, c in enumerate(row["response_claims"]):
            correct = bool(c["correct"]) != (ci in (flip or {}).get(key, set()))
            lf.append({"kind": "claim", "id": key, "digest": d, "claim": ci,
                       "label": "correct" if correct else "wrong", "chunks": c["entailed_by"],
                       "looked": False})
        for ch in row["chunks"]:
            lf.append({"kind": "chunk", "id": key, "digest": d, "chunk": ch["index"],
                       "relevant": ch["relevant"]})
        for ci, c in enumerate(row["reference_claims"] if reference else ()):
            lf.append({"kind": "reference", "id": key, "digest": d, "claim": ci,
                       "in_response": c["in_response"], "chunks": c["entailed_by"]})
        done += 1
    return lf


@contextlib.contextmanager
def review_server(rows: list[Mapping[str, Any]], labels: Path, n: int | None = None,
                  seed: int = 7) -> Iterator[Any]:
    """The review app on 127.0.0.1 (a free port), served by uvicorn in a thread."""
    from noisegauge.people.app import open_state

    state, _ = open_state(list(rows), labels, n, seed)
    with served(state):
        yield state


@contextlib.contextmanager
def golden_server(golden: Path, events: Path) -> Iterator[Any]:
    """The golden-set review of the file ``golden`` into ``events``, served as above."""
    from noisegauge.people.golden import read_golden
    from noisegauge.people.golden_page import GoldenState

    state = GoldenState(read_golden(golden), LabelFile(events))
    with served(state):
        yield state


@contextlib.contextmanager
def served(state: Any) -> Iterator[None]:
    """``state``'s page on a real loopback socket, uvicorn in a thread, until the block ends."""
    import uvicorn

    from noisegauge.cli.review import bind
    from noisegauge.people.app import build_app

    sock = bind(0)
    state.port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(state), log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "review server did not start"
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
