"""Every code block of README.md, examples/ and docs/**/*.md runs as written (markdown_blocks).

Each page's blocks run in order in a fresh directory holding a copy of ``examples/``; each
script in ``examples/`` runs with the command its docstring gives (``Run: ``...````), and an
extra it stops for must be the one its docstring names.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from batch_helpers import missing_module
from markdown_blocks import _MISSING, ROOT, Block, Page, blocks, check_pip_line, pages
from noisegauge.testing import FakeOpenAIServer

PAGES = [*pages(), ROOT / "examples" / "README.md"]
CASES = [(page, i, b) for page in PAGES for i, b in enumerate(blocks(page)) if b.runs]
SCRIPTS = sorted((ROOT / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def page_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Path, Page]]:
    """One directory per page, and one judge cache for the whole module."""
    cache = tmp_path_factory.mktemp("doc-cache") / "judge-cache.sqlite3"

    class Pages(dict[Path, Page]):
        def __missing__(self, page: Path) -> Page:
            self[page] = Page(page, tmp_path_factory.mktemp(page.stem), cache)
            return self[page]

    yield Pages()


@pytest.mark.parametrize(("page", "index", "block"), CASES,
                         ids=[b.name for _, _, b in CASES])
def test_block_runs_as_written(page: Path, index: int, block: Block,
                               page_dirs: dict[Path, Page]) -> None:
    if block.skip:
        pytest.skip(block.skip)
    if block.server:
        with FakeOpenAIServer() as server:
            page_dirs[page].run(index, server.url)
    else:
        page_dirs[page].run(index, None)


def _docstring(script: Path) -> str:
    return ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""


def _run_script(script: Path, workdir: Path, shadow: tuple[str, ...] = ()
                ) -> tuple[str, subprocess.CompletedProcess[str]]:
    """Run ``script`` with the command its docstring gives, in ``workdir`` (a copy of examples/).

    ``shadow``: modules made unimportable, as on a machine without the extra holding them.
    """
    doc = _docstring(script)
    run = re.search(r"Run: ``(.+?)``", doc)
    assert run, f"{script.name}: the docstring says how to run it (Run: ``python ...``)"
    argv = run[1].split()
    assert argv[0] == "python", run[1]
    shutil.copytree(ROOT / "examples", workdir / "examples")
    path = [str(ROOT / "src")]
    if shadow:
        blocked = workdir / "shadow"
        for module in shadow:
            (blocked / module).mkdir(parents=True)
            (blocked / module / "__init__.py").write_text(
                f"raise ImportError('{module} is not installed (shadowed by the test)')\n")
        path.insert(0, str(blocked))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
           "PYTHONPATH": os.pathsep.join(path), "MPLBACKEND": "Agg",
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with FakeOpenAIServer() as server:  # a script that calls a model is told where by the env
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-example-key")
        done = subprocess.run([sys.executable, *argv[1:]], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=300)
    return doc, done


def _documented_extra(script: Path, doc: str, missing: str) -> None:
    """The extra a script stopped for is the one its docstring says it needs."""
    needs = re.search(r"Needs ``(pip install [^`]+)``", doc)
    assert needs, f"{script.name} stops with `{missing}` and its docstring does not say so"
    check_pip_line(needs[1], script.name)
    extras = set(re.findall(r"[a-z-]+", missing.split("[", 1)[-1]))
    assert extras <= set(re.findall(r"[a-z-]+", needs[1].split("[", 1)[-1])), (
        f"{script.name} needs {missing}, its docstring says {needs[1]}")


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_example_script_runs_with_its_documented_command(script: Path, tmp_path: Path) -> None:
    doc, done = _run_script(script, tmp_path)
    missing = _MISSING.search(done.stderr)
    if done.returncode and missing:
        _documented_extra(script, doc, missing[1])
        pytest.skip(f"needs an optional extra: {missing[1]}")
    module = missing_module(done.stderr)
    if done.returncode and module:
        _documented_extra(script, doc, module)
        pytest.skip(f"needs an optional extra: {module}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), f"{script.name} printed nothing"


def test_batch_example_without_pandas_names_the_extra_its_docstring_gives(
        tmp_path: Path) -> None:
    """After a plain `pip install .` the example stops for [tables]: its docstring says so."""
    script = ROOT / "examples" / "batch_evaluation.py"
    doc, done = _run_script(script, tmp_path, shadow=("pandas",))
    missing = _MISSING.search(done.stderr)
    assert done.returncode == 1 and missing, done.stderr[-3000:]
    assert missing[1] == "pip install '.[tables]'"
    _documented_extra(script, doc, missing[1])


def test_blocks_reads_languages_markers_and_console_prompts(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n"
        "<!-- doctest: server; setup: cp a b; exit: 1; timeout: 5 -->\n"
        "```bash\nnoisegauge score x.jsonl --judge openai:m --base-url http://localhost:11434/v1\n```\n\n"
        "<!-- doctest: skip: slow; see tests/test_x.py -->\n\n"
        "```python\nprint(1)\n```\n\n"
        "```console\n$ noisegauge --help\nUsage: ...\n```\n\n"
        "~~~\nnot run\n~~~\n\n"
        "```toml\n[a]\nb = 1\n```\n", encoding="utf-8")
    found = blocks(page)
    assert [b.lang for b in found] == ["bash", "python", "console", "", "toml"]
    first, second, third, fourth, _ = found
    assert first.server and first.setup == ["cp a b"] and first.exit == 1 and first.timeout == 5
    assert first.line == 4 and not first.skip
    assert second.skip == "slow; see tests/test_x.py"  # the reason runs to the end
    assert not fourth.runs and third.runs
    from markdown_blocks import shell_script
    assert "Usage" not in shell_script(third) and "noisegauge --help" in shell_script(third)
    pip = Block(page, 1, "bash", "pip install '.[nope]'\n")
    with pytest.raises(AssertionError, match="nope"):
        shell_script(pip)
    assert shell_script(Block(page, 1, "bash", "pip install '.[dev]' && echo ok\n")).endswith(
        " echo ok\n")
