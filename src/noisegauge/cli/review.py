"""``noisegauge review RESULTS --labels LABELS``: label a random sample on a local page;
``noisegauge review GOLDEN --labels EVENTS``: check a drafted golden set, row by row. Which
one, from the file's rows (a golden row carries ``distractors``/``draft``, a result row
``status``/``metrics``).

Serves the page on 127.0.0.1 only, with a random token in its URL (printed, and opened
unless ``--no-browser``), until Ctrl-C. Every click is appended to LABELS at once.

Exit codes: 0 stopped (Ctrl-C); 2 bad invocation, unreadable results, a port in use or a
missing extra.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import MissingDependency, NoiseGaugeError
from .console import error, note, stdout
from .paths import refuse_clobber

if TYPE_CHECKING:
    from ..people.app import Reviewed

__all__ = ["review", "serve"]


def serve(state: Reviewed, sock: socket.socket) -> None:
    """Run uvicorn on ``sock`` until Ctrl-C (needs the ``review`` extra)."""
    from ..people.app import build_app

    try:
        import uvicorn
    except ImportError as exc:
        raise MissingDependency("noisegauge review", "review", "starlette and uvicorn") from exc
    config = uvicorn.Config(build_app(state), log_level="warning", access_log=False,
                            lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free one); never another address."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


@click.command()
@click.argument("results", metavar="RESULTS|GOLDEN",
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="LABELS.jsonl (for GOLDEN: EVENTS.jsonl) to append to (created; reopened "
                   "to resume).")
@click.option("--n", "n", type=click.IntRange(min=1),
              help="Samples of RESULTS to review (default: as LABELS's session, else 30).")
@click.option("--seed", type=int,
              help="Seed of the random order of RESULTS (default: as LABELS's session, else "
                   "random and recorded there).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL but do not open a browser.")
def review(results: Path, labels_path: Path, n: int | None, seed: int | None, port: int,
           no_browser: bool) -> None:
    """Label a uniform random sample of RESULTS, or check every row of a golden set, in
    your browser.

    RESULTS: for each claim of the answer: correct, wrong and stated in chunk(s), or wrong
    and in no chunk; for each chunk: relevant or not. Label before showing the judge's
    verdicts (a label made after looking is marked). Then: noisegauge estimate RESULTS
    --labels LABELS.

    GOLDEN (from noisegauge testset): per row, accept or reject it, edit the reference (type
    it, or click sentences of the chunks holding the answer), mark which chunks hold the
    answer, keep or drop each trap. Then: noisegauge testset export GOLDEN --labels EVENTS
    --out FINAL.jsonl.
    """
    from ..people.app import open_state
    from ..people.golden import sniff
    from ..report import read_results

    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        error(str(MissingDependency("noisegauge review", "review", "starlette and uvicorn")))
        sys.exit(2)
    refuse_clobber({"--labels": labels_path}, {"RESULTS": results})
    try:
        if sniff(results) == "golden":
            if n is not None or seed is not None:
                raise click.UsageError("--n and --seed pick a random sample of RESULTS; a "
                                       "golden set is reviewed row by row, every row")
            _review_golden(results, labels_path, port, no_browser)
            return
        state, _ = open_state(read_results(results), labels_path, n, seed)
    except (NoiseGaugeError, OSError) as exc:
        error(str(exc))
        sys.exit(2)
    sock = _listen(port)
    state.port = sock.getsockname()[1]
    url = state.url
    out = stdout()
    out.print(f"reviewing {len(state.order)} samples of {results} (seed {state.seed}); "
              f"labels: {labels_path}")
    out.print(f"open: {url}")
    out.print("Ctrl-C to stop; every label is already saved.")
    sys.stdout.flush()
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        serve(state, sock)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    p = state.progress(state.current())
    note(f"{p['done']} of {p['total']} labelled ({p['skipped']} skipped); next: "
         f"noisegauge estimate {results} --labels {labels_path}")


def _listen(port: int) -> socket.socket:
    try:
        return bind(port)
    except OSError as exc:
        error(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; try another --port "
              "(or 0 for a free one)")
        sys.exit(2)


def _review_golden(golden: Path, events: Path, port: int, no_browser: bool) -> None:
    from ..people.golden import read_golden
    from ..people.golden_page import GoldenState
    from ..people.labels import LabelFile

    state = GoldenState(read_golden(golden), LabelFile(events))
    state.current()  # an events file of another kind is refused now, not on the first click
    sock = _listen(port)
    state.port = sock.getsockname()[1]
    out = stdout()
    out.print(f"reviewing {len(state.rows)} rows of the golden set {golden}; events: {events}")
    out.print(f"open: {state.url}")
    out.print("Ctrl-C to stop; every change is already saved.")
    sys.stdout.flush()
    if not no_browser:
        import webbrowser

        webbrowser.open(state.url)
    try:
        serve(state, sock)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    p = state.progress(state.current())
    note(f"{p['accepted']} of {p['total']} rows accepted ({p['rejected']} rejected); next: "
         f"noisegauge testset export {golden} --labels {events} --out FINAL.jsonl")
