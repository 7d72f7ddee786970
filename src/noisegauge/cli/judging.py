"""What the CLI says about the judge: canaries before the run, and honest accounting after.

Kept apart from the command modules so that every command reports judges the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..errors import JudgeError
from ..judges.base import Judge, Usage
from ..judges.canaries import CanaryReport, run_canaries

__all__ = ["check_canaries", "endpoint_lines", "summary_usage_line"]

log = logging.getLogger("noisegauge")


def summary_usage_line(u: Usage) -> str:
    """``judge: calls 58, cached 0, re-asks 3, retries 2, timeouts 1, ...`` for the summary
    (calls include re-asks; retries include timeouts)."""
    cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
    return (f"judge: calls {u.calls:,}, cached {u.cached_calls:,}, re-asks {u.re_asks:,}, "
            f"retries {u.retries:,}, timeouts {u.timeouts:,}, failed calls {u.failed_calls:,}, "
            f"output-mode fallbacks {u.fallbacks:,}, tokens {u.prompt_tokens:,} prompt + "
            f"{u.completion_tokens:,} completion, cost {cost}")


def endpoint_lines(judges: Sequence[Any]) -> list[str]:
    """One line per remote endpoint: output mode (and how it was found) and concurrency."""
    lines = []
    for judge in judges:
        report = getattr(judge, "endpoint_report", None)
        if not callable(report):
            continue
        r: dict[str, Any] = report()
        how = "forced" if not r["negotiated"] else (
            "from the cache" if r["mode_from_cache"] else "negotiated")
        mode = f"output mode {r['output_mode'] or 'not settled'} ({how}"
        mode += f"; refused: {', '.join(r['refused_modes'])})" if r["refused_modes"] else ")"
        line = f"  {r['endpoint']} ({r['model']}): {mode}"
        if "concurrency" in r:
            c = r["concurrency"]
            line += f", concurrency {c['now']} (max {c['max']}, lowest {c['lowest']})"
        lines.append(line)
    return lines


async def check_canaries(judge: Judge, report: CanaryReport, *, strict: bool) -> None:
    """Run the canaries into ``report``; warn loudly when the judge looks unfit, and under
    ``strict`` stop before the dataset costs anything."""
    fresh = await run_canaries(judge)
    report.results = fresh.results
    report.usage.add(fresh.usage)
    warning = report.warning()
    if warning is None:
        log.info("%s", report.line())
        return
    if strict:
        raise JudgeError(f"{warning} (stopping: --strict)")
    log.warning("%s", warning)
