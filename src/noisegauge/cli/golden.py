"""``noisegauge testset export GOLDEN --labels EVENTS --out FINAL.jsonl``: the golden set as a
person left it in ``noisegauge review GOLDEN --labels EVENTS``.

``testset export`` is routed here by the entry point (``cli.main.SUBCOMMANDS``), beside
``testset DOCS…``, which drafts GOLDEN.

Exit codes: 0 written; 2 bad invocation, an unreadable GOLDEN or EVENTS, or no row accepted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import NoiseGaugeError
from ..infra.outputs import replacing
from .console import error, note, quiet_option
from .paths import refuse_clobber

__all__ = ["export"]


@click.command("export")
@click.argument("golden", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--labels", "labels_path", required=True, metavar="EVENTS",
              type=click.Path(path_type=Path, dir_okay=False),
              help="The review events `noisegauge review GOLDEN --labels EVENTS` appended.")
@click.option("--out", required=True, type=click.Path(path_type=Path, dir_okay=False),
              metavar="FINAL.jsonl", help="Where to write the kept rows (JSONL).")
@quiet_option
def export(golden: Path, labels_path: Path, out: Path, quiet: bool) -> None:
    """Write the rows of GOLDEN a person accepted in `noisegauge review GOLDEN --labels
    EVENTS`, as they left them: their reference, the chunks they said hold the answer, the
    traps they kept; each with draft.reviewed true and what they changed under "review".
    Rejected rows, and rows not decided yet, are left out.
    """
    from ..people.golden import export_rows, read_golden
    from ..people.labels import LabelFile

    refuse_clobber({"--out": out}, {"GOLDEN": golden, "--labels": labels_path})
    try:
        rows = read_golden(golden)
        if not labels_path.is_file():
            raise NoiseGaugeError(f"{labels_path}: no such events file (make one with "
                                  f"`noisegauge review {golden} --labels {labels_path}`)")
        events, bad = LabelFile(labels_path).read()
        kept, counts = export_rows(rows, events)
    except (NoiseGaugeError, OSError) as exc:
        error(str(exc))
        sys.exit(2)
    if not kept:
        error(f"{labels_path}: no row of {golden} is accepted yet; review it first: "
              f"noisegauge review {golden} --labels {labels_path}")
        sys.exit(2)
    with replacing(out) as dest, dest.open("w", encoding="utf-8") as fh:
        for row in kept:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    if quiet:
        return
    left = [f"{counts.rejected} rejected"] if counts.rejected else []
    if counts.undecided:
        left.append(f"{counts.undecided} not decided yet")
    note(f"wrote {counts.kept} of {counts.total} rows to {out}"
         + (f" ({', '.join(left)}: left out)" if left else ""))
    if counts.stale:
        note(f"{counts.stale} row(s) were reviewed on another version of the row (GOLDEN "
             "changed since): review them again")
    if bad:
        note(f"{labels_path}: skipped {len(bad)} torn line(s) (line {bad[0]}): a crash "
             "during a write")
