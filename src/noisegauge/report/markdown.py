"""A Markdown summary for a CI job page (GitHub's ``$GITHUB_STEP_SUMMARY``, GitLab notes).

The verdict first, then the bars, the metric family with intervals, and the worst samples
with their leaked claims. Every user text is flattened to one line and escaped, so an
answer holding ``|``, backticks or ``<script>`` cannot break the table or the page.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine.summary import methods_note
from ..errors import UnwritableOutput
from ..infra.outputs import unwritable, write_text
from ..io.results import history_turns
from .digest import clip, wrong_claims
from .gate import GateReport

__all__ = ["render_markdown", "write_markdown", "STEP_SUMMARY_ENV"]

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
#: Turns of a conversation shown before its question (the last ones: they give an
#: elliptical question its meaning); the earlier ones are counted.
SHOWN_TURNS = 2
_ESCAPE = str.maketrans({"|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;", "`": "\\`",
                         "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]", "\\": "\\\\"})


def _md(text: object, limit: int = 140) -> str:
    return clip(str(text), limit).translate(_ESCAPE)


def _turns_line(inp: Any) -> str | None:
    """``after 2 earlier turns, then user: “...” · assistant: “...”``: the last turns before a
    conversation's question, each escaped; None for a single turn."""
    turns = history_turns(inp) if isinstance(inp, Mapping) else []
    if not turns:
        return None
    n = len(turns) - SHOWN_TURNS
    more = f"{n} earlier turn{'s' if n > 1 else ''}, then " if n > 0 else ""
    said = " · ".join(f"{_md(role, 20)}: “{_md(text, 100)}”"
                      for role, text in turns[-SHOWN_TURNS:])
    return f"after {more}{said}"


def _num(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def render_markdown(gate: GateReport, *, worst: int = 5) -> str:
    """The summary as Markdown text."""
    failed = [o for o in gate.outcomes if not o.passed]
    if not gate.outcomes:
        head = "noisegauge: scored (no bars set)"
    elif failed:
        head = f"❌ noisegauge: {len(failed)} of {len(gate.outcomes)} bars failed"
    else:
        head = f"✅ noisegauge: all {len(gate.outcomes)} bars passed"
    st = gate.status
    u = gate.usage
    cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
    judges = ", ".join(_md(j.get("judge") or j.get("kind") or j.get("model") or "?", 40)
                       + (f" (canaries {_md(str(j['canaries']), 40)})" if j.get("canaries") else "")
                       for j in gate.judges) or "?"
    lines = [f"## {head}", "",
             f"**{_md(gate.title, 80)}**: {gate.rows:,} rows ({st.get('ok', 0):,} ok, "
             f"{st.get('undefined', 0):,} undefined, {st.get('error', 0):,} error); judge "
             f"{judges}; {u.calls:,} judge calls, cost {cost}", ""]
    if gate.outcomes:
        lines += ["| bar | mean | 95% CI | n | result |", "|---|---:|---|---:|---|"]
        for o in gate.outcomes:
            ci = "-" if o.ci is None or o.n < 2 else f"{o.ci[0]:.3f}–{o.ci[1]:.3f}"
            result = "✅ pass" if o.passed else "❌ fail"
            lines.append(f"| `{o.threshold}` | {_num(o.mean)} | {ci} | {o.n} | {result} |")
        lines.append("")
    lines += ["<details><summary>All metrics</summary>", "",
              "| metric | mean | 95% CI | n | undefined | errors |",
              "|---|---:|---|---:|---:|---:|"]
    for s in gate.summary.values():
        ci = "-" if s.ci is None or s.n < 2 else f"{s.ci[0]:.3f}–{s.ci[1]:.3f}"
        lines.append(f"| {s.name} | {_num(s.mean)} | {ci} | {s.n} | {s.undefined} | {s.errors} |")
    lines += ["", methods_note(gate.summary.values()) + ".", "", "</details>", ""]
    shown = gate.failures[:worst]
    if shown:
        names = [o.threshold.metric for o in failed]
        lines += [f"### Worst samples ({len(shown)} of {len(gate.failures)})", ""]
        for f in shown:
            if f.error:
                lines.append(f"- **{_md(f.id, 80)}**: could not be scored: "
                             f"{_md(f.row.get('reason'), 200)}")
                continue
            metrics = f.row.get("metrics") or {}
            values = ", ".join(f"{n} {_num(metrics.get(n))}" for n in names)
            inp = f.row.get("input") or {}
            question = inp.get("user_input") if isinstance(inp, Mapping) else None
            lines.append(f"- **{_md(f.id, 80)}** ({values})" +
                         (f": {_md(question)}" if question else ""))
            turns = _turns_line(inp)
            if turns:  # a conversation: what the question follows, before what went wrong
                lines.append(f"  - {turns}")
            for c in wrong_claims(f.row, 3):
                src = f" {', '.join(map(str, c.chunks))}" if c.chunks else ""
                lines.append(f"  - “{_md(c.text, 160)}”: {c.label}{src}")
        lines.append("")
    return "\n".join(lines)


def write_markdown(path: str | os.PathLike[str] | None, gate: GateReport, *,
                   step_summary: bool = True) -> list[Path]:
    """Write the summary to ``path`` and, when ``$GITHUB_STEP_SUMMARY`` is set, append it
    there too (that file collects every step's summary). Returns the files written."""
    text = render_markdown(gate)
    written = []
    if path is not None:
        written.append(write_text(path, text))
    summary = os.environ.get(STEP_SUMMARY_ENV) if step_summary else None
    if summary:
        try:  # appended to, as every step does: never replaced
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            raise UnwritableOutput(f"{summary} (${STEP_SUMMARY_ENV})",
                                   unwritable(exc, summary).reason) from None
        written.append(Path(summary))
    return written

