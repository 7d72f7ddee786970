"""One check for every command: no output option may name one of the command's inputs (its
INPUT or RESULTS, a LABELS file) or another output, so a slip of the shell never destroys
people's labels or the results a report is made from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

__all__ = ["refuse_clobber"]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def refuse_clobber(outputs: Mapping[str, Path | None], inputs: Mapping[str, Path | None]) -> None:
    """Raise a usage error (exit 2) when an output names an input or another output.

    ``outputs``/``inputs``: option name (``--json``, ``RESULTS``) -> path or None (not given).
    Paths are compared as files (``samefile``: links and ``./`` spellings included) when both
    exist, else by their resolved names.
    """
    given_in = [(k, p) for k, p in inputs.items() if p is not None]
    given_out = [(k, p) for k, p in outputs.items() if p is not None]
    for i, (name, out) in enumerate(given_out):
        if out.exists() and not out.is_file():
            continue  # a device or FIFO (/dev/null, /dev/stdout) is written through, never lost
        for other, path in [*given_in, *given_out[:i]]:
            if _same(out, path) or os.path.realpath(out) == os.path.realpath(path):
                raise click.UsageError(
                    f"{name} {out} would overwrite {other} (the same file); "
                    f"choose another {name} file")
