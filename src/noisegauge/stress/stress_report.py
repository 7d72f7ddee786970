"""What a sweep produced: one row per (question, noise level, repeat), the curve, the flips.

Files written by ``StressReport.write(DIR)``:

- ``samples.jsonl``: the generated answers with their noisy contexts, in the input format of
  ``noisegauge score`` (rescorable later with any judge); ``metadata`` says which chunk is what;
  a failed generation is a ``status: "error"`` row with its ``reason``, which stays an error
  row when rescored; a case that could not be made (``siblings`` on a row without traps) has
  no answer and is only in ``results.jsonl``, as an undefined row with its reason;
- ``results.jsonl``: ``SampleResult.to_row()`` plus ``item_id``, ``level``, ``repeat``;
- ``curve.json``: per metric and level, mean and 95% interval (see ``curve_from_rows``);
- ``flips.jsonl``: questions answered correctly without noise and wrongly with it;
- ``run.json``: the configuration (pipeline, judge, strategy, seed...) and counts;
- ``curve.png``: when matplotlib is installed.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.catalogue import family
from ..engine.summary import interval
from ..errors import MissingDependency
from ..infra.secrets import redact
from ..samples import Turn
from ..scoring.results import SampleResult
from .chunks import Chunk

__all__ = ["StressRow", "StressReport", "curve_from_rows", "contexts_digest", "read_rows"]


def contexts_digest(contexts: Sequence[str]) -> str:
    """Fingerprint of a context list; ``compare`` uses it to prove two runs saw the same noise."""
    return hashlib.sha256(json.dumps(list(contexts), ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class StressRow:
    """One generated and scored answer."""

    item_id: str
    question: str
    reference: str
    level: int
    repeat: int
    chunks: tuple[Chunk, ...]
    answer: str | None
    result: SampleResult
    generation_error: str | None = None
    cached: bool = False
    #: The conversation before ``question`` (``GoldenItem.history``); empty for a single turn.
    history: tuple[Turn, ...] = ()

    @property
    def sample_id(self) -> str:
        return f"{self.item_id}@L{self.level}r{self.repeat}"

    @property
    def injected(self) -> int:
        return sum(c.kind != "relevant" for c in self.chunks)

    def sample_record(self) -> dict[str, Any]:
        """The answer and its contexts, readable by ``noisegauge score``. A failed generation
        is a row with ``status: "error"`` and its ``reason`` (and no response), which
        ``noisegauge score`` keeps as an error row: never an empty answer to be scored."""
        failed = {} if self.answer is not None else {
            "status": "error", "reason": f"pipeline failed: {self.generation_error}"}
        return {
            "id": self.sample_id, **failed, **self._history(), "user_input": self.question,
            "response": self.answer, "reference": self.reference,
            "retrieved_contexts": [{"doc_id": c.id, "text": c.text} for c in self.chunks],
            "metadata": {"item_id": self.item_id, "level": self.level, "repeat": self.repeat,
                         "injected": self.injected, "generation_error": self.generation_error,
                         "chunks": [{k: v for k, v in c.to_dict().items() if k != "text"}
                                    for c in self.chunks]},
        }

    def _history(self) -> dict[str, Any]:
        """``{"history": [...]}`` as ``Sample.to_record`` writes it; nothing for a single turn."""
        if not self.history:
            return {}
        return {"history": [{"role": t.role, "content": t.content} for t in self.history]}

    def result_row(self) -> dict[str, Any]:
        row = self.result.to_row()
        row.update(item_id=self.item_id, level=self.level, repeat=self.repeat,
                   injected=self.injected, contexts_sha256=contexts_digest([c.text for c in self.chunks]))
        # The texts, so the row reads (and reports) on its own, like ``score --out`` rows.
        row["input"] = {**self._history(), "user_input": self.question, "response": self.answer or "",
                        "reference": self.reference,
                        "retrieved_contexts": [c.text for c in self.chunks],
                        "chunk_ids": [f"{c.kind}: {c.id}" if c.id else c.kind for c in self.chunks]}
        return row


def curve_from_rows(levels: Sequence[int], rows: Iterable[Mapping[str, Any]],
                    metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"levels": [...], "metrics": {name: [{"level", "mean", "ci", "n", ...}]}}``.

    Repeats of a question are averaged first, so ``mean`` is over questions and ``ci`` is a
    95% interval over questions (repeats are not independent evidence): bootstrap BCa where
    scipy is installed and n allows, else Student-t (``ci_method``; see engine.summary);
    ``n`` is the number of questions with a defined value, ``samples`` the defined samples,
    ``undefined`` and ``errors`` count samples. ``mean`` is null when nothing defined the
    metric, ``ci`` also when fewer than two questions did. ``metrics``: the family by default.
    """
    metrics = family() if metrics is None else metrics
    by_level: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_level[int(row["level"])].append(row)
    out: dict[str, list[dict[str, Any]]] = {}
    for name in metrics:
        points = []
        for level in levels:
            per_item: dict[str, list[float]] = defaultdict(list)
            undefined = errors = 0
            for row in by_level.get(level, []):
                value = (row.get("metrics") or {}).get(name)
                if row.get("status") == "error":
                    errors += 1
                elif value is None:
                    undefined += 1
                else:
                    per_item[str(row["item_id"])].append(float(value))
            means = [sum(v) / len(v) for v in per_item.values()]
            mean, ci, method = interval(means)
            points.append({"level": level, "mean": mean, "ci": list(ci) if ci else None,
                           "ci_method": method,
                           "n": len(means), "samples": sum(len(v) for v in per_item.values()),
                           "undefined": undefined, "errors": errors})
        out[name] = points
    return {"levels": list(levels), "metrics": out}


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def _incorrect_claims(row: StressRow) -> list[dict[str, Any]]:
    ev = row.result.evidence
    if ev is None:
        return []
    out = []
    for claim in ev.response_claims:
        if claim.correct:
            continue
        sources = claim.leaked_from or claim.entailed_by
        out.append({"text": claim.text, "bucket": claim.bucket, "leaked_from": [
            {"index": j, **row.chunks[j].to_dict()} for j in sources if j < len(row.chunks)]})
    return out


@dataclass(frozen=True)
class StressReport:
    """The result of ``stress()``: rows in plan order, plus how they were made."""

    levels: tuple[int, ...]
    rows: tuple[StressRow, ...]
    config: Mapping[str, Any] = field(default_factory=dict)

    def curve(self) -> dict[str, Any]:
        return curve_from_rows(self.levels, [r.result_row() for r in self.rows])

    def flips(self) -> list[dict[str, Any]]:
        """Questions whose clean answer (level 0) had no incorrect claim and whose answer at a
        higher level has some, with those claims and the chunks they were entailed by."""
        clean = {r.item_id: r for r in self.rows
                 if r.level == 0 and r.result.status == "ok" and r.result.value("precision") == 1.0}
        flips: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in self.rows:
            if r.level > 0 and r.item_id in clean and r.result.status == "ok":
                precision = r.result.value("precision")
                if precision is not None and precision < 1.0:
                    flips[r.item_id].append({"level": r.level, "repeat": r.repeat,
                                             "answer": r.answer,
                                             "incorrect_claims": _incorrect_claims(r)})
        out = []
        for item_id, noisy in flips.items():
            c = clean[item_id]
            noisy.sort(key=lambda f: (f["level"], f["repeat"]))
            out.append({"id": item_id, "question": c.question, "reference": c.reference,
                        "clean_answer": c.answer, "first_flip_level": noisy[0]["level"],
                        "flips": noisy})
        return out

    def write(self, out_dir: str | Path, *, plot: bool = True) -> dict[str, Path | str]:
        """Write every output file; returns name -> path (or the reason a file was skipped)."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path | str] = {}

        def dump_jsonl(name: str, rows: Iterable[Mapping[str, Any]]) -> None:
            with (d / name).open("w", encoding="utf-8") as f:
                for row in rows:
                    f.write(redact(json.dumps(row, ensure_ascii=False)) + "\n")
            written[name] = d / name

        dump_jsonl("samples.jsonl", (r.sample_record() for r in self.rows
                                      if not (r.answer is None and r.result.status == "undefined")))
        dump_jsonl("results.jsonl", (r.result_row() for r in self.rows))
        dump_jsonl("flips.jsonl", self.flips())
        curve = self.curve()
        (d / "curve.json").write_text(json.dumps(curve, indent=1) + "\n", encoding="utf-8")
        written["curve.json"] = d / "curve.json"
        (d / "run.json").write_text(redact(json.dumps(dict(self.config), indent=1, ensure_ascii=False,
                                                      default=str)) + "\n", encoding="utf-8")
        written["run.json"] = d / "run.json"
        if plot:
            from .plot import plot_curve
            try:
                written["curve.png"] = plot_curve(curve, d / "curve.png",
                                                  title=str(self.config.get("pipeline", "")))
            except MissingDependency as exc:
                written["curve.png"] = f"not written: {exc}"
        return written
