"""``noisegauge review RESULTS --labels LABELS``: label a random sample on a local page.

Serves the page on 127.0.0.1 only, with a random token in its URL (printed, and opened
unless ``--no-browser``), until Ctrl-C. Every click is appended to LABELS at once.

Exit codes: 0 stopped (Ctrl-C); 2 bad invocation, unreadable results, a port in use or a
missing extra.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import click

from ..errors import MissingDependency, NoiseGaugeError
from ..infra.outputs import unwritable
from .console import error, note, stdout

__all__ = ["review", "serve"]


def serve(state: object, sock: socket.socket) -> None:
    """Run uvicorn on ``sock`` until Ctrl-C (needs the ``review`` extra)."""
    from ..people.app import ReviewState, build_app

    assert isinstance(state, ReviewState)
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
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="LABELS.jsonl to append to (created; reopened to resume).")
@click.option("--n", "n", type=click.IntRange(min=1),
              help="Samples to review (default: as LABELS's session, else 30).")
@click.option("--seed", type=int,
              help="Seed of the random order (default: as LABELS's session, else random and "
                   "recorded there).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL but do not open a browser.")
def review(results: Path, labels_path: Path, n: int | None, seed: int | None, port: int,
           no_browser: bool) -> None:
    """Label a uniform random sample of RESULTS in your browser, one sample at a time.

    For each claim of the answer: correct, wrong and stated in chunk(s), or wrong and in no
    chunk; for each chunk: relevant or not. Label before showing the judge's verdicts (a
    label made after looking is marked). Then: noisegauge estimate RESULTS --labels LABELS.
    """
    from ..people.app import open_state
    from ..report import read_results

    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        error(str(MissingDependency("noisegauge review", "review", "starlette and uvicorn")))
        sys.exit(2)
    try:
        rows = read_results(results)
    except (NoiseGaugeError, OSError) as exc:
        error(str(exc))
        sys.exit(2)
    try:
        state, _ = open_state(rows, labels_path, n, seed)
    except NoiseGaugeError as exc:
        error(str(exc))
        sys.exit(2)
    except OSError as exc:  # LABELS is read and appended to: an output that cannot be
        error(str(unwritable(exc, labels_path)))
        sys.exit(2)
    try:
        sock = bind(port)
    except OSError as exc:
        error(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; try another --port "
              "(or 0 for a free one)")
        sys.exit(2)
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
