"""Build the documentation site, or say the one line that installs what it needs.

    python docs/scripts/build.py            # mkdocs build --strict (site/)
    python docs/scripts/build.py serve      # any other mkdocs command and its options

Without the ``docs`` extra, MkDocs names a missing theme or plugin; this names the fix.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The modules of the ``docs`` extra (pyproject.toml) and the line that installs them.
MODULES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers", "mkdocs_click")
INSTALL = "pip install '.[docs]'"


def missing() -> list[str]:
    return [m for m in MODULES if importlib.util.find_spec(m) is None]


def main(argv: list[str]) -> int:
    gone = missing()
    if gone:
        print(f"the docs site needs {', '.join(gone)}, which is not installed. "
              f"Install it with: {INSTALL}", file=sys.stderr)
        return 2
    args = argv or ["build", "--strict"]
    return subprocess.call([sys.executable, "-m", "mkdocs", *args], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
