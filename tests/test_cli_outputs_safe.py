"""Outputs that must not destroy files, and a stdout closed early (issue #30)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from noisegauge.testing.children import spawned

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "examples" / "calibration_pairs.jsonl"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.mark.parametrize("args", [["calibrate", str(PAIRS)], ["cache", "info"],
                                  ["--help"]])
def test_stdout_closed_early_exits_0_quietly(args: list[str]) -> None:
    """A reader that is gone before the first line (``| head -0``): exit 0, nothing on stderr."""
    r, w = os.pipe()
    os.close(r)  # every write to stdout now fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "noisegauge", *args], stdout=w,
                              stderr=subprocess.PIPE, env=_env(), timeout=120, check=False)
    finally:
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"Broken pipe" not in proc.stderr


def test_stdout_closed_after_first_line_exits_0() -> None:
    """``noisegauge calibrate ... | head -1`` through a real pipe."""
    with spawned([sys.executable, "-m", "noisegauge", "calibrate", str(PAIRS)],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 0, err
    assert first.startswith(b"30 labelled pairs")


SUPPORT = ROOT / "examples" / "support_bot.jsonl"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noisegauge", *args], capture_output=True,
                          text=True, env=_env(), timeout=300, check=False)


def test_outputs_through_a_symlink_keep_the_link(tmp_path: Path) -> None:
    """score --out/--junit and report --out onto links: each link stays a link, its target
    gets the content (no write-then-rename over the link)."""
    links = {}
    for name in ("results.jsonl", "junit.xml", "report.html", "leaks.json"):
        target = tmp_path / f"target-{name}"
        target.write_text("old", encoding="utf-8")
        links[name] = tmp_path / name
        links[name].symlink_to(target)
    r = _cli("score", str(SUPPORT), "--out", str(links["results.jsonl"]),
             "--junit", str(links["junit.xml"]), "-q")
    assert r.returncode in (0, 1), r.stderr
    r = _cli("report", str(links["results.jsonl"]), "--out", str(links["report.html"]))
    assert r.returncode == 0, r.stderr
    r = _cli("leaks", str(links["results.jsonl"]), "--json", str(links["leaks.json"]))
    assert r.returncode == 0, r.stderr
    for name, link in links.items():
        assert link.is_symlink(), name
        assert (tmp_path / f"target-{name}").read_text(encoding="utf-8") != "old", name


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="replacing /dev/null needs root")
def test_dev_null_stays_a_device(tmp_path: Path) -> None:
    import stat

    results = tmp_path / "r.jsonl"
    r = _cli("score", str(SUPPORT), "--out", "/dev/null", "--junit", "/dev/null", "-q")
    assert r.returncode in (0, 1), r.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    r = _cli("score", str(SUPPORT), "--out", str(results), "-q")
    assert r.returncode in (0, 1), r.stderr
    for args in (["report", str(results), "--out", "/dev/null"],
                 ["leaks", str(results), "--json", "/dev/null"]):
        r = _cli(*args)
        assert r.returncode == 0, r.stderr
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode), args
