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
from ..infra.outputs import unwritable
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
@click.option("--plan", "plan_path", type=click.Path(path_type=Path, dir_okay=False),
              help="PLAN.jsonl from `noisegauge sample`: review its samples of RESULTS in "
                   "its order (default: the plan LABELS's session used, if any).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL but do not open a browser.")
def review(results: Path, labels_path: Path, n: int | None, seed: int | None,
           plan_path: Path | None, port: int, no_browser: bool) -> None:
    """Label a uniform random sample of RESULTS (or a --plan's), or check every row of a
    golden set, in your browser.

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
    from ..people.design import read_plan
    from ..people.labels import LabelFile, fold

    refuse_clobber({"--labels": labels_path}, {"RESULTS": results, "--plan": plan_path})
    try:
        if sniff(results) == "golden":
            if n is not None or seed is not None or plan_path is not None:
                raise click.UsageError("--n, --seed and --plan pick samples of RESULTS; a "
                                       "golden set is reviewed row by row, every row")
            _review_golden(results, labels_path, port, no_browser)
            return
        if plan_path is None and seed is None and n is None:  # resume the session's plan
            session = fold(*LabelFile(labels_path).read()).session or {}
            plan_path = Path(session["plan"]) if session.get("plan") else None
        plan = None if plan_path is None else (str(plan_path), read_plan(plan_path))
        rows = read_results(results)
    except (NoiseGaugeError, OSError) as exc:
        error(str(exc))
        sys.exit(2)
    try:
        state, _ = open_state(rows, labels_path, n, seed, plan)
    except NoiseGaugeError as exc:
        error(str(exc))
        sys.exit(2)
    except OSError as exc:  # LABELS is read and appended to: an output that cannot be
        error(str(unwritable(exc, labels_path)))
        sys.exit(2)
    sock = _listen(port)
    state.port = sock.getsockname()[1]
    drawn = f"plan {plan_path}" if plan_path is not None else f"seed {state.seed}"
    stdout().print(f"reviewing {len(state.order)} samples of {results} ({drawn}); "
                   f"labels: {labels_path}")
    _open_and_serve(state, sock, state.url, "label", no_browser)
    p = state.progress(state.current())
    with_plan = "" if plan_path is None else f" --plan {plan_path}"
    note(f"{p['done']} of {p['total']} labelled ({p['skipped']} skipped); next: "
         f"noisegauge estimate {results} --labels {labels_path}{with_plan}")


def _open_and_serve(state: Reviewed, sock: socket.socket, url: str, what: str,
                    no_browser: bool) -> None:
    """Print the page's URL, open it unless told not to, and serve until Ctrl-C."""
    out = stdout()
    out.print(f"open: {url}")
    out.print(f"Ctrl-C to stop; every {what} is already saved.")
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
    stdout().print(f"reviewing {len(state.rows)} rows of the golden set {golden}; events: {events}")
    _open_and_serve(state, sock, state.url, "change", no_browser)
    p = state.progress(state.current())
    note(f"{p['accepted']} of {p['total']} rows accepted ({p['rejected']} rejected); next: "
         f"noisegauge testset export {golden} --labels {events} --out FINAL.jsonl")
