"""Run the fenced code blocks of a Markdown page as a reader would (README.md, docs/**/*.md).

``blocks(path)`` extracts every fenced block with its language and markers; ``Page`` runs a
page's blocks in order in one fresh directory (a copy of ``examples/``), as a reader
following the page would: block *i* runs after blocks 0..i-1 of its page, even when it is
selected alone (``-k``). By language:

- ``bash``, ``sh``, ``shell``: the block is one bash script (``set -eo pipefail``) run with this
  checkout's ``noisegauge`` and ``python`` (the venv's interpreter, ``PYTHONPATH=src``).
  ``pip install ...`` lines are not run: the extras they name must exist in pyproject.toml
  (a renamed extra fails), and the test environment is expected to have them.
- ``console``: the lines starting with ``$ `` are the commands, the rest is output.
- ``python``, ``py``: the block is a file run by a fresh interpreter; a block that defines
  ``test_*`` functions is run by pytest instead, so its assertions are checked.
- ``toml``, ``json``: parsed (a syntax check; a ``json`` block may be JSON Lines); not run.
- no language, ``text``, anything else: shown output, not run.

A block that stops with ``MissingDependency`` (an optional extra not installed here), or with
``ModuleNotFoundError`` for a third-party module this environment lacks, is skipped with its
``pip install`` line, as every test needing an extra does.

Markers: an HTML comment on the line(s) right before the fence (invisible on the rendered
page), directives separated by ``;``. The directory holds a copy of ``examples/`` and links
to ``bench/``, ``docs/`` and ``training/``, as a clone has them::

    <!-- doctest: skip: REASON -->     not run; say where it is tested instead, if it is
                                       (the last directive: the reason runs to the ``-->``)
    <!-- doctest: server -->           the fake OpenAI-compatible server runs
                                       (noisegauge.testing.fake_openai): OPENAI_BASE_URL and
                                       OPENAI_API_KEY point at it, and every
                                       http://localhost:PORT/v1 (or 127.0.0.1) in the block is it
    <!-- doctest: setup: COMMAND -->    a bash command run first, in the same directory: the
                                       files a reader would already have
                                       (``cp examples/support_bot.jsonl data.jsonl``); repeatable
    <!-- doctest: exit: N -->          the exit status the block must end with (default 0)
    <!-- doctest: timeout: S -->       seconds before the block counts as hung (default 300:
                                       a shared 2-core machine under load is slow)

Judge answers are cached in one file per test session (a temp dir), so a command that
scores the bundled example again costs no judge work.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import missing_module

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell", "console"}
PYTHON = {"python", "py"}
PARSED = {"toml", "json"}
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)")
_MARKER = re.compile(r"<!--\s*doctest:(.*?)-->", re.S)
_LOCAL_URL = re.compile(r"http://(?:localhost|127\.0\.0\.1):\d+/v1")
_PIP_LINE = re.compile(r"^\s*pip install\b")
_EXTRAS = re.compile(r"(?:\.|noisegauge)\[([a-z0-9_,\- ]+)\]")
#: MissingDependency's message, in a traceback or on the CLI's stderr
_MISSING = re.compile(r"not installed\. Install it with: (pip install \S+)")


@dataclass
class Block:
    """One fenced block: where it starts (1-based line), its language, code and markers."""

    path: Path
    line: int
    lang: str
    code: str
    skip: str | None = None
    server: bool = False
    setup: list[str] = field(default_factory=list)
    exit: int = 0
    timeout: float = 300.0

    @property
    def runs(self) -> bool:
        return self.lang in SHELL | PYTHON | PARSED

    @property
    def name(self) -> str:
        where = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{where}:{self.line}:{self.lang or 'text'}"


def _directives(comment: str, block: Block) -> None:
    parts = comment.split(";")
    for n, part in enumerate(parts):
        key, _, value = part.strip().partition(":")
        key, value = key.strip(), value.strip()
        if key == "skip":  # the reason is the rest of the comment, ';' and all
            block.skip = ";".join([value, *parts[n + 1:]]).strip() or "marked skip"
            return
        if key == "server":
            block.server = True
        elif key == "setup":
            block.setup.append(value)
        elif key == "exit":
            block.exit = int(value)
        elif key == "timeout":
            block.timeout = float(value)
        elif key:
            raise ValueError(f"{block.path}:{block.line}: unknown doctest directive {key!r}")


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the markers written right before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m["fence"], i
        end = start + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        indent = len(m["indent"])
        code = "\n".join(line[indent:] if line[:indent].isspace() else line
                         for line in lines[start + 1:end])
        block = Block(path, start + 1, m["info"].lower(), code + "\n")
        j = start - 1  # the comments right above the fence (blank lines allowed between)
        above: list[str] = []
        while j >= 0 and (not lines[j].strip() or lines[j].strip().endswith("-->")):
            if lines[j].strip():
                k = j
                while "<!--" not in lines[k]:
                    k -= 1
                above.insert(0, "\n".join(lines[k:j + 1]))
                j = k
            j -= 1
        for comment in above:
            for directives in _MARKER.findall(comment):
                _directives(directives, block)
        out.append(block)
        i = end + 1
    return out


def pages() -> list[Path]:
    """README.md and every docs/**/*.md that exists."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def load_toml(text: str) -> dict[str, Any]:
    """tomllib (3.11+), or tomli on 3.10; without either the test skips with the line."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli", reason="pip install tomli (Python 3.10)")
    data: dict[str, Any] = tomllib.loads(text)
    return data


def known_extras() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return set(load_toml(text)["project"]["optional-dependencies"])


def check_pip_line(line: str, where: str) -> None:
    """A ``pip install`` line is not run; the extras it names must exist."""
    unknown = {e.strip() for group in _EXTRAS.findall(line) for e in group.split(",")}
    unknown -= known_extras()
    assert not unknown, f"{where}: `{line.strip()}` names extras pyproject.toml lacks: {unknown}"


def shell_script(block: Block) -> str:
    """The block as a bash script: console prompts stripped, pip lines checked, not run."""
    lines = block.code.splitlines()
    if block.lang == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    kept = []
    for line in lines:
        if _PIP_LINE.match(line):
            check_pip_line(line, block.name)
            # the rest of a `pip install ... && cmd` line still runs
            line = line.split("&&", 1)[1] if "&&" in line else ":"
        kept.append(line)
    return "set -eo pipefail\n" + "\n".join(kept) + "\n"


def _missing_extra(result: subprocess.CompletedProcess[str]) -> str | None:
    """The install line of the optional extra a block stopped for, when it is not here."""
    missing = _MISSING.search(result.stderr + result.stdout)
    if missing:
        return missing[1].strip()
    return missing_module(result.stderr + result.stdout)


class Page:
    """One page's directory and how far its blocks have run."""

    def __init__(self, path: Path, workdir: Path, cache: Path) -> None:
        self.path, self.workdir, self.cache = path, workdir, cache
        self.blocks = blocks(path)
        self.done = 0
        self.skipped: str | None = None
        shutil.copytree(ROOT / "examples", workdir / "examples")
        for name in ("bench", "docs", "training"):  # read as a clone has them (python bench/x.py)
            if (ROOT / name).is_dir():
                (workdir / name).symlink_to(ROOT / name, target_is_directory=True)

    def env(self, server_url: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        bindir = str(Path(sys.executable).parent)
        env.update(PATH=bindir + os.pathsep + env.get("PATH", ""),
                   PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT / "tests"),
                   NOISEGAUGE_CACHE=str(self.cache), MPLBACKEND="Agg",
                   NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
                   COLUMNS="120", LITELLM_LOCAL_MODEL_COST_MAP="True")
        if server_url:
            env.update(OPENAI_BASE_URL=server_url, OPENAI_API_BASE=server_url,
                       OPENAI_API_KEY="sk-doctest-key")
        return env

    def run_until(self, index: int, server_url: str | None) -> None:
        """Run the blocks before ``index`` not run yet (their failures are this one's)."""
        while self.done < index:
            before = self.blocks[self.done]
            self.done += 1
            if before.runs and not before.skip and not before.server:
                result = self._run(before, None)
                if result is not None and result.returncode != before.exit:
                    self._skip_if_missing_extra(result, before)
                assert result is None or result.returncode == before.exit, (
                    f"an earlier block of the page failed ({before.name}):\n{_tail(result)}")

    def _skip_if_missing_extra(self, result: subprocess.CompletedProcess[str],
                               block: Block) -> None:
        extra = _missing_extra(result)
        if extra is not None:
            # the page's later blocks build on this one: they need the extra too
            self.skipped = f"{block.name} needs an optional extra: {extra}"
            pytest.skip(self.skipped)

    def run(self, index: int, server_url: str | None) -> None:
        """Run block ``index`` (after the ones before it) and check how it ended."""
        if self.skipped is not None:
            pytest.skip(self.skipped)
        self.run_until(index, server_url)
        block = self.blocks[index]
        self.done = max(self.done, index + 1)
        result = self._run(block, server_url)
        if result is None:
            return
        if result.returncode != block.exit:
            self._skip_if_missing_extra(result, block)
        assert result.returncode == block.exit, (
            f"{block.name} exited {result.returncode}, expected {block.exit}:\n{_tail(result)}")

    def _run(self, block: Block,
             server_url: str | None) -> subprocess.CompletedProcess[str] | None:
        env = self.env(server_url)
        for command in block.setup:
            done = subprocess.run(["bash", "-c", command], cwd=self.workdir, env=env,
                                  capture_output=True, text=True, timeout=block.timeout)
            assert done.returncode == 0, f"{block.name}: setup `{command}` failed:\n{_tail(done)}"
        code = block.code
        if server_url:
            code = _LOCAL_URL.sub(server_url, code)
        if block.lang in PARSED:
            if block.lang == "toml":
                load_toml(code)
            else:  # a JSON document, or JSON Lines shown as json: each line parses
                try:
                    json.loads(code)
                except json.JSONDecodeError:
                    for line in filter(str.strip, code.splitlines()):
                        json.loads(line)
            return None
        if block.lang in PYTHON:
            is_test = re.search(r"^(async )?def test_", code, re.M) is not None
            script = self.workdir / (f"test_block_{block.line}.py" if is_test
                                     else f"block_{block.line}.py")
            script.write_text(code, encoding="utf-8")
            argv = ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", script.name]
                    if is_test else [sys.executable, script.name])
        else:
            argv = ["bash", "-c", shell_script(Block(block.path, block.line, block.lang, code))]
        return subprocess.run(argv, cwd=self.workdir, env=env, capture_output=True, text=True,
                              timeout=block.timeout)


def _tail(result: subprocess.CompletedProcess[str] | None, n: int = 3000) -> str:
    if result is None:
        return ""
    return f"--- stdout\n{result.stdout[-n:]}\n--- stderr\n{result.stderr[-n:]}"
