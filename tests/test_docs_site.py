"""The documentation site: ``mkdocs build --strict`` passes (no broken link, missing page or
stale API reference), the CLI reference lists every subcommand of the lazy group, the pictures
are what the scripts draw from the bundled example, and README's links into docs/ resolve.
The build needs the ``docs`` extra and is skipped with the install line without it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from batch_helpers import ROOT, require_extra
from noisegauge.cli.main import COMMANDS

DOCS = ROOT / "docs"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_extra("docs")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_the_cli_reference_has_every_subcommand(site: Path) -> None:
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f'id="noisegauge-{name}"' in html, name
    assert "--mlflow-experiment" in html  # options come from the commands themselves


def test_the_api_reference_is_built_from_the_docstrings(site: Path) -> None:
    html = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("runner.evaluate.evaluate", "scoring.NoiseSensitivity", "judges.get_judge",
                 "integrations.mlflow.log_report", "pytest.assert_scores"):
        assert f'id="noisegauge.{name}"' in html, name
    assert "Log a run's" in html  # log_report's docstring


def test_korean_pages_are_built(site: Path) -> None:
    for page, heading in (("ko/index.html", "빠른 시작"), ("ko/concepts/index.html", "두 가지 모드")):
        html = (site / page).read_text(encoding="utf-8")
        assert heading in html, page
    assert "claim-matrix.svg" in (site / "ko/concepts/index.html").read_text(encoding="utf-8")


def test_the_site_requests_no_google_fonts(site: Path) -> None:
    # mkdocs-material links fonts.googleapis.com unless the theme says `font: false`
    loading = [str(p.relative_to(site)) for p in site.rglob("*.html")
               if "fonts.googleapis.com" in p.read_text(encoding="utf-8")]
    assert not loading, loading[:5]


def test_the_matrix_picture_is_what_the_example_gives() -> None:
    matrix = _script("claim_matrix")
    drawn = matrix.draw(matrix.sample_row())
    assert (DOCS / "img" / "claim-matrix.svg").read_text(encoding="utf-8") == drawn, \
        "docs/img/claim-matrix.svg is stale: run python docs/scripts/claim_matrix.py"


def test_a_missing_docs_extra_names_the_install_line() -> None:
    script = str(DOCS / "scripts" / "build.py")
    block = ("import runpy, sys; sys.modules['mkdocs_click'] = None; "
             f"sys.argv = [{script!r}]; runpy.run_path({script!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "pip install '.[docs]'" in done.stderr


def _links(markdown: str) -> list[str]:
    return [m for m in re.findall(r"\]\(([^)\s]+)\)", markdown)
            if not m.startswith(("http://", "https://", "#", "mailto:"))]


def test_readme_links_into_the_docs_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = _links(text)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        assert (ROOT / link.split("#")[0]).exists(), link


def test_every_docs_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    listed = set(re.findall(r"^\s*- [^#\n]*:\s*([\w/.-]+\.md)\s*$", nav, re.M))
    assert pages == listed, (pages - listed, listed - pages)
