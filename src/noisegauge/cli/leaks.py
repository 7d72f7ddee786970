"""``noisegauge leaks RESULTS``: which documents carry wrong claims into answers.

Exit codes: 0 done; 2 bad invocation or unreadable input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import NoiseGaugeError
from ..infra.outputs import replacing
from .console import error, stdout
from .paths import refuse_clobber

if TYPE_CHECKING:
    from ..leaks.aggregate import Leaks, LeakTally

__all__ = ["leaks"]

#: Sources the table shows without --top.
TABLE_TOP = 10


def _write_json(path: Path, tally: LeakTally, found: Leaks, top: int | None, topk: bool) -> None:
    """``{"sources": [...], ...}`` written a source at a time: a run with hundreds of
    thousands of sources never has them all in memory as dicts or as one string."""
    with replacing(path) as dest, dest.open("w", encoding="utf-8") as fh:
        fh.write('{"sources": [')
        for n, source in enumerate(tally.json_sources(top)):
            fh.write((",\n " if n else "\n ") + json.dumps(source, ensure_ascii=False))
        fh.write("\n]")
        if found.agreement is not None:
            fh.write(', "agreement": ' + json.dumps(found.agreement.to_json()))
        if topk:
            fh.write(', "topk": ' + json.dumps([r.to_json() for r in found.topk]))
        fh.write("}\n")


@click.command()
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--top", type=click.IntRange(min=1), metavar="N",
              help="Show (and write) only the N sources with the most leaked claims "
                   "(table default: 10; --json default: every source).")
@click.option("--json", "json_out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write {\"sources\": [...]} there, ranked by leaked claims, then source.")
@click.option("--topk", is_flag=True,
              help="Also show what a smaller top-k would have kept (from the verdicts held; no "
                   "judge call).")
@click.option("--examples", type=click.IntRange(min=0, max=3), default=1, show_default=True,
              help="Example leaked claims printed per source.")
def leaks(results: Path, top: int | None, json_out: Path | None, topk: bool,
          examples: int) -> None:
    """Rank the sources (documents, chunks) of RESULTS by the wrong claims they carried
    into answers, across the whole run.

    RESULTS is the JSONL of `noisegauge score --out`, read one row at a time. A source is
    a chunk's id (retrieved_context_ids, RAGChecker doc_id, a source field) or a digest of
    its text. Per source: leaked claims (relevant noise, irrelevant noise, misattributed),
    their share of all leaked claims, how often it was retrieved and judged irrelevant, and
    the relevant source it most often came with (confused with).

    Exit codes: 0 done; 2 RESULTS unreadable or not results, or OUT not writable.
    """
    from ..leaks.aggregate import LeakTally

    refuse_clobber({"--json": json_out}, {"RESULTS": results})
    from ..leaks.render import sources_table, topk_table
    from ..leaks.text import agreement_line, cumulative_line, source_label
    from ..leaks.topk import CAVEAT
    from ..report.data import iter_results

    tally = LeakTally()
    try:
        for row in iter_results(results):
            tally.add(row)
        found = tally.leaks(top or TABLE_TOP)
        if json_out is not None:
            _write_json(json_out, tally, found, top, topk)
    except NoiseGaugeError as exc:
        error(str(exc))
        sys.exit(2)
    except OSError as exc:
        error(f"{exc.strerror or exc}: {exc.filename or json_out}")
        sys.exit(2)
    out = stdout()
    shown = found.sources
    scored = found.rows - found.errors
    out.print(f"{results.name}: {found.rows:,} samples ({found.errors:,} error rows left out), "
              f"{found.leaked_claims:,} leaked claims, {found.total_sources:,} sources.",
              markup=False, highlight=False)
    if found.unsourced:
        out.print(f"{found.unsourced:,} of {scored:,} scored rows carry neither chunk ids nor "
                  "texts, so their sources are unknown and they are not counted; score them "
                  "again with this version.", markup=False, highlight=False)
    if found.relevance_from:
        parts = ", ".join(f"{k} {v:,}" for k, v in found.relevance_from.items())
        out.print(f"chunk relevance from: {parts}.", markup=False, highlight=False)
    if shown:
        out.print(sources_table(shown))
    line = cumulative_line(found)
    out.print(line or "No claim leaked from any source.", markup=False, highlight=False)
    agree = agreement_line(found)
    if agree:
        out.print(agree, markup=False, highlight=False)
    if examples:
        for r, s in enumerate(shown, 1):
            for ex in s.examples[:examples]:
                out.print(f"  {r}. {source_label(s)} · sample {ex.sample} · "
                          f"{ex.kind.replace('_', ' ')}: {ex.text}", markup=False,
                          highlight=False)
                if ex.context is not None:  # a conversation: the turns that give it meaning
                    out.print(f"     in: {ex.context}", markup=False, highlight=False)
    if topk:
        out.print("What another top-k would have kept:", markup=False, highlight=False)
        out.print(topk_table(found.topk))
        out.print(CAVEAT, markup=False, highlight=False)
    if json_out is not None:
        out.print(f"wrote {json_out}", markup=False, highlight=False)
