"""The habits of a released package: the version everywhere, and the licence in the wheel."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import noisegauge
from noisegauge.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_0_2_0_in_the_package_the_metadata_and_the_cli() -> None:
    declared = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(
        encoding="utf-8"), re.M)
    assert declared is not None and declared.group(1) == "0.2.0"
    assert noisegauge.__version__ == "0.2.0"
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and res.output.strip().endswith("0.2.0"), res.output


def _can_build() -> bool:
    """Whether this environment has the build backend pyproject names (setuptools >= 68, and
    ``wheel`` below 70.1, which builds wheels itself), as --no-build-isolation needs."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools

    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    if version >= (70, 1):
        return True
    return version >= (68, 0) and importlib.util.find_spec("wheel") is not None


def test_the_built_wheel_carries_the_apache_license(tmp_path: Path) -> None:
    if not _can_build():
        pytest.skip("building the wheel here needs what pyproject's build-system asks for: "
                    "pip install 'setuptools>=68' wheel")
    project = tmp_path / "project"  # a copy, so the build leaves the checkout untouched
    project.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "src", project / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(project)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("noisegauge-0.2.0-*.whl")
    with zipfile.ZipFile(wheel) as z:
        licences = [n for n in z.namelist() if n.endswith("/LICENSE")]
        assert licences, z.namelist()[-10:]
        text = z.read(licences[0]).decode("utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
