"""``noisegauge report RESULTS --out report.html``: one self-contained HTML file.

Exit codes: 0 written; 2 bad invocation or unreadable input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from ..errors import NoiseGaugeError
from .console import error, quiet_option
from .paths import refuse_clobber

__all__ = ["report"]


@click.command()
@click.argument("results", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The HTML file to write.")
@click.option("--compare", "compare", type=click.Path(path_type=Path, dir_okay=False),
              help="Results of another run of the same inputs (paired by id, else row index).")
@click.option("--stress", "stress", type=click.Path(path_type=Path, file_okay=False),
              help="A `noisegauge stress --out` directory: its curves and flipped questions "
                   "(RESULTS defaults to DIR/results.jsonl).")
@click.option("--input", "input_path", type=click.Path(path_type=Path, dir_okay=False),
              help="The scored input file, for results whose rows lack the input texts.")
@click.option("--title", help="Title of the report (default: the results file name).")
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              help="People's labels (`noisegauge review`): adds a 'Checked by people' tab.")
@click.option("--label", help="This run's name in compare views (default: dataset · judge · date).")
@click.option("--compare-label", help="The --compare run's name (default: dataset · judge · date).")
@quiet_option
def report(results: Path | None, out: Path, compare: Path | None, stress: Path | None,
           input_path: Path | None, title: str | None, labels_path: Path | None,
           label: str | None, compare_label: str | None, quiet: bool) -> None:
    """Write an HTML report of RESULTS (the JSONL of `noisegauge score --out`).

    One file with everything inline (no network): the run, the metric family with
    intervals, the noise modes against the reading bands, the retrieval-vs-generator
    diagnosis, and every sample with its claims highlighted in the answer and the chunks
    they came from.
    """
    from ..report import file_info, read_results, run_label, write_report
    from ..report.data import fill_inputs

    refuse_clobber({"--out": out}, {"RESULTS": results, "--compare": compare, "--stress": stress,
                                    "--input": input_path, "--labels": labels_path})
    err = Console(stderr=True, highlight=False, markup=False)
    try:
        if results is None:
            if stress is None:
                raise click.UsageError("give RESULTS (or --stress DIR)")
            results = stress / "results.jsonl"
        rows = read_results(results)
        if input_path is not None:
            fill_inputs(rows, input_path)
        missing = sum(1 for r in rows if "input" not in r and r.get("status") != "error")
        if missing and input_path is None and not quiet:
            err.print(f"note: {missing} row(s) carry no input texts (results from an older "
                      "noisegauge?); pass --input INPUT to show questions, answers and chunks")
        other = None
        names: dict[str, str] = {}
        if compare is not None:
            other = read_results(compare)
            this_name = label or run_label(results, rows)
            other_name = compare_label or run_label(compare, other)
            if other_name == this_name:  # same dataset, judge and minute: say which is which
                this_name, other_name = f"{this_name} (this)", f"{other_name} (compared)"
            names = {"label": this_name, "compare_label": other_name}
        est = None
        if labels_path is not None:
            from ..people import estimate

            est = estimate(rows, labels_path)
        path = write_report(out, rows, info=file_info(results, title), compare=other,
                            stress=stress, estimate=est, **names)
    except NoiseGaugeError as exc:
        error(str(exc))  # literal: a path with [brackets] must print as it is
        sys.exit(2)
    size = path.stat().st_size
    Console(highlight=False, markup=False).print(f"report: {path} ({size / 1e6:.2f} MB, {len(rows):,} samples)")
