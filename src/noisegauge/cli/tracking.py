"""``--mlflow``, ``--mlflow-experiment``, ``--mlflow-run-name`` for ``score``, ``stress`` and
``compare``: the run goes to the MLflow tracking server named by ``MLFLOW_TRACKING_URI``.

Kept apart so each command gains them with a decorator and one call. MLflow itself is
checked before any work (a missing extra is exit 2 with the install line, not an hour of
judging and then an error).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..errors import NoiseGaugeError
from .console import error, stdout

__all__ = ["MlflowTarget", "check_mlflow", "mlflow_options", "track"]

F = TypeVar("F", bound=Callable[..., Any])
MlflowTarget = tuple[str | None, str | None]  # (experiment, run name)


def mlflow_options(f: F) -> F:
    """Add the three MLflow options; the command receives ``mlflow`` as ``None`` (off) or
    ``(experiment, run_name)``."""

    @functools.wraps(f)
    def wrapper(*args: Any, mlflow_on: bool, mlflow_experiment: str | None,
                mlflow_run_name: str | None, **kwargs: Any) -> Any:
        if not mlflow_on and (mlflow_experiment or mlflow_run_name):
            raise click.UsageError("--mlflow-experiment and --mlflow-run-name need --mlflow")
        target = check_mlflow((mlflow_experiment, mlflow_run_name)) if mlflow_on else None
        return f(*args, mlflow=target, **kwargs)

    wrapper = click.option("--mlflow-run-name", metavar="NAME",
                           help="Name of the MLflow run (default: MLflow's).")(wrapper)
    wrapper = click.option("--mlflow-experiment", metavar="NAME",
                           help="MLflow experiment (default: $MLFLOW_EXPERIMENT_NAME, else "
                                "noisegauge).")(wrapper)
    wrapper = click.option("--mlflow", "mlflow_on", is_flag=True,
                           help="Log the run to MLflow ($MLFLOW_TRACKING_URI): params, metrics, "
                                "artifacts; a failed gate marks it FAILED "
                                "(pip install '.[mlflow]').")(wrapper)
    return wrapper  # type: ignore[return-value]


def check_mlflow(target: MlflowTarget) -> MlflowTarget:
    """The target, once MLflow is known to import and its HTTP tracking server to answer;
    else exit 2 with the install line, or naming the server that does not answer."""
    from ..integrations.mlflow import check_server

    try:
        check_server()
    except NoiseGaugeError as exc:
        error(str(exc))
        raise SystemExit(2) from None
    return target


def track(target: MlflowTarget | None, log: Callable[[str | None, str | None], str],
          code: int) -> int:
    """Run ``log(experiment, run_name)`` when ``--mlflow`` was given; the exit code to use.
    A tracking server that fails is exit 2 (the results on disk are kept), unless the run
    had already failed a gate (1 stays 1)."""
    if target is None:
        return code
    try:
        run_id = log(*target)
    except Exception as exc:  # MLflow raises its own, requests' and OSError: all say why
        error(f"could not log to MLflow: {type(exc).__name__}: {exc}")
        return code if code else 2
    stdout().print(f"mlflow run: {run_id}")
    return code
