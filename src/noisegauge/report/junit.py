"""JUnit XML for CI test tabs (GitHub test-report actions, GitLab, Jenkins).

Two suites: ``noisegauge.gates`` with one test case per bar (failed when the run's mean
misses it), and ``noisegauge.samples`` with one test case per sample that pulls a failed
bar the wrong way (a ``<failure>`` naming its values and leaked claims) or could not be
scored (an ``<error>``). The file follows the Ant/JUnit layout those tools read, with every
attribute the strictest schema (Ant's) requires (``package``, ``id``, ``hostname``, ``timestamp``
without a zone, ``properties``, ``system-out``, ``system-err``).
"""

from __future__ import annotations

import os
import re
import socket
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..infra.outputs import write_text
from .digest import clip, sample_lines
from .gate import GateReport

__all__ = ["render_junit", "write_junit"]

# Characters XML 1.0 cannot carry, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: Any) -> str:
    return _INVALID_XML.sub("\ufffd", str(text))


def _suite(root: ET.Element, name: str, index: int, gate: GateReport,
           properties: Mapping[str, str]) -> ET.Element:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(gate.timestamp))
    suite = ET.SubElement(root, "testsuite", {
        "name": name, "package": "noisegauge", "id": str(index), "tests": "0",
        "failures": "0", "errors": "0", "skipped": "0", "time": "0",
        "timestamp": stamp, "hostname": _x(socket.gethostname() or "localhost")})
    props = ET.SubElement(suite, "properties")
    for key, value in properties.items():
        ET.SubElement(props, "property", {"name": key, "value": _x(value)})
    return suite


def _close(suite: ET.Element, out: str) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    ET.SubElement(suite, "system-out").text = _x(out)
    ET.SubElement(suite, "system-err").text = ""


def _properties(gate: GateReport) -> dict[str, str]:
    props = {"input": gate.title, "rows": str(gate.rows)}
    for status in ("ok", "undefined", "error"):
        props[f"rows_{status}"] = str(gate.status.get(status, 0))
    for i, judge in enumerate(gate.judges):
        props[f"judge_{i}"] = ", ".join(f"{k}={v}" for k, v in judge.items()
                                        if isinstance(v, (str, int, float)))
    u = gate.usage
    props["judge_calls"] = str(u.calls)
    props["cost_usd"] = "unknown" if u.cost_usd is None else f"{u.cost_usd:.6f}"
    return props


def render_junit(gate: GateReport) -> str:
    """The JUnit XML document (a string with its XML declaration)."""
    # No attributes on the root: the strict Ant schema allows none, and readers sum the suites.
    root = ET.Element("testsuites")
    props = _properties(gate)
    gates = _suite(root, "noisegauge.gates", 0, gate, props)
    for o in gate.outcomes:
        case = ET.SubElement(gates, "testcase", {
            "name": _x(str(o.threshold)), "classname": "noisegauge.gates", "time": "0"})
        if not o.passed:
            failure = ET.SubElement(case, "failure", {"message": _x(o.message),
                                                      "type": "ThresholdFailed"})
            failure.text = _x(o.message)
    summary = "\n".join(f"{s.name}: " + ("undefined" if s.mean is None else f"{s.mean:.4f}")
                        + f" (n={s.n}, undefined={s.undefined}, errors={s.errors})"
                        for s in gate.summary.values())
    _close(gates, summary)

    samples = _suite(root, "noisegauge.samples", 1, gate, props)
    names = [o.threshold.metric for o in gate.outcomes]
    for f in gate.failures:
        case = ET.SubElement(samples, "testcase", {
            "name": _x(clip(f.id, 200)), "classname": f"noisegauge.samples.{_x(clip(gate.title, 80))}",
            "time": "0"})
        lines = sample_lines(f, names, claims=5)
        if f.error:
            element = ET.SubElement(case, "error", {
                "message": _x(clip(str(f.row.get("reason")), 300)), "type": "ScoringError"})
        else:
            missed = "; ".join(f"{t.metric} {v:.3f} misses {t.op} {t.value:g}" for t, v in f.missed)
            element = ET.SubElement(case, "failure", {"message": _x(missed),
                                                      "type": "SampleBelowBar"})
        element.text = _x("\n".join(lines))
    _close(samples, f"{len(gate.failures)} sample(s) fail a failed bar or could not be scored")

    gates.set("time", f"{gate.elapsed:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: str | os.PathLike[str], gate: GateReport) -> Path:
    """Write ``render_junit(gate)`` to ``path`` atomically."""
    return write_text(path, render_junit(gate))
